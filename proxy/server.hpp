// The proxy process: worker threads, listeners, signal handling and the
// graceful shutdown sequence (stop accepting, let in-flight statements
// finish within shutdown_grace_ms, close).
#pragma once
#include <boost/asio/thread_pool.hpp>

#include <memory>
#include <string>
#include <vector>

#include "proxy/admin/admin_server.hpp"
#include "proxy/background_governor.hpp"
#include "proxy/xa_recovery.hpp"
#include "proxy/core/background_gate.hpp"
#include "proxy/core/statement_limit_table.hpp"
#include "proxy/fleet/fleet_agent.hpp"
#include "proxy/fleet/fleet_xa_store.hpp"
#include "proxy/ha/ha_coordinator.hpp"
#include "proxy/schema/schema_coordinator.hpp"
#include "proxy/admin/metrics_server.hpp"
#include "proxy/changes/change_service.hpp"
#include "proxy/move/hot_key_mover.hpp"
#include "proxy/move/move_coordinator.hpp"
#include "proxy/lifecycle/partition_upkeep.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/maps/shard_map_manager.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

class Server {
 public:
  explicit Server(conf::Config config);
  ~Server();

  // Binds listeners; returns an error message, empty on success.
  std::string start();
  // Blocks until SIGTERM/SIGINT, then shuts down gracefully. SIGHUP
  // reloads the shard map (same as the admin RELOAD SHARD MAP).
  void runUntilSignalled();

  ProxyContext& context() { return context_; }
  ShardMapManager& shardMaps() { return *maps_; }

 private:
  // transactions.cross_backend: atomic: the id prefix and the decision log (server.cpp).
  std::string startTransactions();
  void shutdown();

  ProxyContext context_;
  // Writes global transactions' commit decisions off the workers (before
  // the workers: destroyed after them).
  std::unique_ptr<asio::thread_pool> decision_writers_;
  std::unique_ptr<StatementLimits> statement_limits_;  // before the workers: they admit there
  std::vector<std::unique_ptr<Worker>> workers_;
  // Before every background worker: destroyed after them.
  std::unique_ptr<BackgroundGate> background_gate_;
  std::unique_ptr<BackgroundGovernor> background_governor_;
  std::unique_ptr<XaRecovery> xa_recovery_;  // transactions.cross_backend: atomic
  std::unique_ptr<ShardMapManager> maps_;
  std::unique_ptr<FleetAgent> fleet_;
  std::shared_ptr<FleetXaStore> xa_fleet_;  // in a fleet with transactions.cross_backend: atomic
  // Before the admin server: a SHOW CHANGES in flight holds a consumer slot of it.
  std::unique_ptr<changes::ChangeService> changes_;  // changes.enabled
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<MetricsServer> metrics_;
  std::unique_ptr<PartitionUpkeep> upkeep_;
  std::unique_ptr<MoveCoordinator> moves_;
  std::unique_ptr<HotKeyMover> hot_key_mover_;  // checks on moves_'s thread
  std::unique_ptr<SchemaCoordinator> schema_;
  std::unique_ptr<HaCoordinator> ha_;
};

}  // namespace sp::proxy
