#include "proxy/admin/admin_server.hpp"

#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/admin/admin_session.hpp"

namespace sp::proxy {

AdminServer::AdminServer(ProxyContext& context, ShardMapManager& maps) : context_(context), maps_(maps) {}

AdminServer::~AdminServer() { stop(); }

std::string AdminServer::start() {
  const auto& hp = *context_.config().server.admin_listen;
  asio::ip::address address;
  if (auto failed = server_.start(hp, "admin_listen", "admin port", address,
                                  [this](tcp::socket socket) { return serve(std::move(socket)); });
      !failed.empty()) {
    return failed;
  }
  if (!address.is_loopback() && !context_.config().server.admin_allow_remote) {
    spdlog::warn("admin_listen {} is not a loopback address; only loopback peers are accepted (use an SSH tunnel)",
                 conf::formatHostPort(hp));
  }
  spdlog::info("admin interface listening on {}", conf::formatHostPort(hp));
  return {};
}

void AdminServer::stop() { server_.stop(); }

awaitable<void> AdminServer::serve(tcp::socket socket) {
  uint32_t id = context_.next_connection_id.fetch_add(1);
  sessions_.fetch_add(1);
  auto session = std::make_shared<AdminSession>(context_, maps_, *this, std::move(socket), id);
  co_await session->run();
  sessions_.fetch_sub(1);
}

}  // namespace sp::proxy
