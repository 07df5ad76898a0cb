#include "proxy/admin/admin_server.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/admin/admin_session.hpp"
#include "proxy/net/side_listener.hpp"

namespace sp::proxy {

AdminServer::AdminServer(ProxyContext& context, ShardMapManager& maps) : context_(context), maps_(maps) {}

AdminServer::~AdminServer() { stop(); }

std::string AdminServer::start() {
  const auto& hp = *context_.config().server.admin_listen;
  asio::ip::address address;
  if (auto failed = listenOn(io_, acceptor_, hp, "admin_listen", "admin port", address); !failed.empty()) return failed;
  if (!address.is_loopback() && !context_.config().server.admin_allow_remote) {
    spdlog::warn("admin_listen {} is not a loopback address; only loopback peers are accepted (use an SSH tunnel)",
                 conf::formatHostPort(hp));
  }
  asio::co_spawn(io_, acceptLoop(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
  spdlog::info("admin interface listening on {}", conf::formatHostPort(hp));
  return {};
}

void AdminServer::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    io_.stop();
  });
  thread_.join();
}

awaitable<void> AdminServer::acceptLoop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      spdlog::warn("admin accept failed: {}", ec.message());
      continue;
    }
    auto sock = std::make_shared<tcp::socket>(std::move(socket));
    asio::co_spawn(io_, [this, sock]() -> awaitable<void> { co_await serve(sock); }, asio::detached);
  }
}

awaitable<void> AdminServer::serve(std::shared_ptr<tcp::socket> socket) {
  uint32_t id = context_.next_connection_id.fetch_add(1);
  sessions_.fetch_add(1);
  auto session = std::make_shared<AdminSession>(context_, maps_, *this, std::move(*socket), id);
  co_await session->run();
  sessions_.fetch_sub(1);
}

}  // namespace sp::proxy
