// The admin port (server.admin_listen): MySQL protocol, so the mariadb CLI
// works; admin_users accounts only; loopback peers only. One thread with its
// own io_context, so a slow reload (validation, SQLite write) never stalls
// the workers that serve applications. Commands: docs/admin.md.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "proxy/net/net.hpp"
#include "proxy/net/side_server.hpp"
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
  awaitable<void> serve(tcp::socket socket);

  ProxyContext& context_;
  ShardMapManager& maps_;
  std::atomic<uint32_t> sessions_{0};
  SideServer server_;  // last: stopped (its sessions ended) before the rest goes
};

}  // namespace sp::proxy
