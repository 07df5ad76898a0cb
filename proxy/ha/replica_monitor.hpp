// The replica monitor (docs/availability.md): one loop per server, primary
// or replica, each holding one connection of its own, reads the server's
// role and replication state every ha.check_interval_ms and publishes the
// whole picture (ProxyContext::replica_health) after each probe. Sessions
// choose replicas from it; SHOW BACKENDS and the metrics show it. Roles come
// from ProxyContext::topology. Never two writers: a server that answers
// writable while it is not its group's primary is set read-only at once
// (a returning old primary after a failover, a replica someone opened).
// Runs on the HA coordinator's io_context (all state is touched from that
// thread only).
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proxy/core/proxy_context.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {
class BackendConnection;
}

namespace sp::proxy {

class ReplicaMonitor {
 public:
  struct Hooks {
    // True while a SWITCHOVER / FAILOVER changes `backend`'s roles: its
    // servers are not fenced meanwhile (a promoted one is writable before
    // the new topology is published).
    std::function<bool(const std::string& backend)> switching;
    // After each probe of a server, with the published picture (auto failover).
    std::function<void(const ServerHealth& server)> probed;
  };
  ReplicaMonitor(asio::io_context& io, ProxyContext& context, Hooks hooks = {});
  ~ReplicaMonitor();

  // Starts one probe loop per server, of every backend: a backend without
  // replicas is probed too (whether it answers; it has no role to watch).
  void start();
  // A backend a reload added (its primary and replicas as configured; roles
  // from the topology when it names the backend): probe loops of its own.
  // A removed (or replaced) backend's loops end at their next wake-up and
  // its servers leave the picture. On the coordinator's thread only.
  void addBackend(const conf::BackendConfig& backend);
  void retireBackend(const std::string& name);
  // Thread-safe; the loops end at their next wake-up.
  void stop();
  bool watching() const { return !servers_.empty(); }

 private:
  awaitable<void> watch(size_t index);
  void publish();
  void refreshRole(ServerHealth& server) const;
  awaitable<bool> fenceIfWritable(size_t index, BackendConnection& conn);

  asio::io_context& io_;
  ProxyContext& context_;
  Hooks hooks_;
  // Appends the backend's servers (start-up and addBackend).
  void appendBackend(const conf::BackendConfig& backend);

  // Deques: a reload appends while loops hold references into them.
  std::deque<ServerHealth> servers_;
  std::deque<conf::BackendConfig> configs_;  // the login of each server, same order
  std::deque<bool> alone_;                   // same order: a primary without replicas
  std::deque<bool> retired_;                 // same order: its backend was removed by a reload
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sp::proxy
