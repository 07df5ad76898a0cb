// The replica monitor (docs/availability.md): one loop per server, primary
// or replica, each holding one connection of its own, reads the server's
// role and replication state every ha.check_interval_ms and publishes the
// whole picture (ProxyContext::replica_health) after each probe. Sessions
// choose replicas from it; SHOW BACKENDS and the metrics show it. Runs on
// one io_context (all state is touched from that thread only).
#pragma once
#include <memory>
#include <vector>

#include "proxy/core/proxy_context.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class ReplicaMonitor {
 public:
  ReplicaMonitor(asio::io_context& io, ProxyContext& context);
  ~ReplicaMonitor();

  // Starts one probe loop per server; nothing when no backend lists replicas
  // (one server per backend has no role to watch).
  void start();
  // Thread-safe; the loops end at their next wake-up.
  void stop();
  bool watching() const { return !servers_.empty(); }

 private:
  awaitable<void> watch(size_t index);
  void publish();

  asio::io_context& io_;
  ProxyContext& context_;
  std::vector<ServerHealth> servers_;
  std::vector<conf::BackendConfig> configs_;  // the login of each server, same order
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sp::proxy
