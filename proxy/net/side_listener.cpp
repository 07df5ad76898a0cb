#include "proxy/net/side_listener.hpp"

namespace sp::proxy {

std::string listenOn(asio::io_context& io, asio::ip::tcp::acceptor& acceptor, const conf::HostPort& hp,
                     const std::string& key, const std::string& port_name, asio::ip::address& address) {
  using tcp = asio::ip::tcp;
  boost::system::error_code ec;
  address = asio::ip::make_address(hp.host, ec);
  if (ec) {
    tcp::resolver resolver(io);
    auto results = resolver.resolve(hp.host, std::to_string(hp.port), ec);
    if (ec || results.empty()) return "cannot resolve " + key + " address " + hp.host;
    address = results.begin()->endpoint().address();
  }
  tcp::endpoint endpoint(address, hp.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return "cannot listen on " + port_name + " " + conf::formatHostPort(hp) + ": " + ec.message();
  return {};
}

}  // namespace sp::proxy
