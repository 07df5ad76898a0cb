#include "proxy/net/side_server.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "proxy/net/side_listener.hpp"

namespace sp::proxy {

std::string SideServer::start(const conf::HostPort& hp, const std::string& key, const std::string& port_name,
                              asio::ip::address& bound, Serve serve) {
  if (auto failed = listenOn(io_, acceptor_, hp, key, port_name, bound); !failed.empty()) return failed;
  port_name_ = port_name;
  serve_ = std::move(serve);
  asio::co_spawn(io_, acceptLoop(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
  return {};
}

void SideServer::stop() {
  if (!thread_.joinable() || stopped_.exchange(true)) return;
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    io_.stop();
  });
  thread_.join();
}

awaitable<void> SideServer::acceptLoop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      spdlog::warn("{}: accept failed: {}", port_name_, ec.message());
      continue;
    }
    asio::co_spawn(io_, serve_(std::move(socket)), asio::detached);
  }
}

}  // namespace sp::proxy
