// The admin port (server.admin_listen): MySQL protocol, so the mariadb CLI
// works; admin_users accounts only; loopback peers only. One thread with its
// own io_context, so a slow reload (validation, SQLite write) never stalls
// the workers that serve applications. Commands: docs/admin.md.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

class ShardMapManager;

class AdminServer {
 public:
  AdminServer(ProxyContext& context, ShardMapManager& maps);
  ~AdminServer();

  // Binds server.admin_listen and starts the thread; returns an error message.
  std::string start();
  void stop();  // thread-safe; idempotent

  uint32_t sessionCount() const { return sessions_.load(); }

 private:
  awaitable<void> acceptLoop();
  awaitable<void> serve(std::shared_ptr<tcp::socket> socket);

  ProxyContext& context_;
  ShardMapManager& maps_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
  std::atomic<uint32_t> sessions_{0};
};

}  // namespace sp::proxy
