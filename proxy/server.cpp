#include "proxy/server.hpp"

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/schema_drift_check.hpp"
#include "proxy/core/xa_decision_log.hpp"

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "proxy/lifecycle/archived_months.hpp"
#include "proxy/observe/slow_log.hpp"
#include "proxy/net/tls_contexts.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

namespace sp::proxy {

namespace {

// What the default backend tells every client: its own greeting version
// (drivers gate features and workarounds on the greeting, so it names the
// server behind the proxy, issue 30) and the session_track_* settings a new
// session of it starts with. One connection at start-up, before any worker
// runs; nullopt when the backend does not answer in time (the built-in
// version and MariaDB's default tracking stay).
struct BackendDefaults {
  std::string version;
  std::optional<protocol::TrackingSettings> tracking;
};

std::optional<BackendDefaults> readBackendDefaults(const ProxyContext& context) {
  const conf::Config& config = context.config();
  const auto backend = currentPrimary(context, config.default_backend);
  if (!backend) return std::nullopt;
  asio::io_context io;
  std::optional<BackendDefaults> defaults;
  asio::co_spawn(io, [&]() -> awaitable<void> {
    auto conn = co_await BackendConnection::open(*backend, 0, config.server.max_packet_bytes);
    if (!conn || (*conn)->serverVersion().empty()) co_return;
    defaults.emplace();
    defaults->version = (*conn)->serverVersion();
    auto rows = co_await (*conn)->queryRows(
        "SELECT @@global.session_track_system_variables, @@global.session_track_schema, "
        "@@global.session_track_state_change");
    if (rows && rows->size() == 1 && rows->front().size() == 3) {
      const auto& row = rows->front();
      defaults->tracking = protocol::trackingSettingsFrom(row[0].value_or(""), row[1].value_or("OFF"),
                                                          row[2].value_or("OFF"));
    }
  }, asio::detached);
  io.run_for(std::chrono::milliseconds(backend->connect_timeout_ms) + std::chrono::seconds(1));
  return defaults;
}

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  error_code ec;
  auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

// server.threads = 0: one worker per core, except when every backend runs on
// this host. Then the databases (and usually the load) share the cores with
// the proxy, whose cost is mostly kernel time for wakeups: a worker that sleeps
// less often (it has more sessions to serve per epoll_wait) costs less per
// query. Measured on 2 cores with both MariaDB servers and sysbench: 1 worker
// used 41 us of CPU per point select where 2 used 48-64, at the same
// throughput (docs/benchmarks.md, "Per-query cost").
unsigned autoThreads(const conf::Config& cfg) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  bool all_local = !cfg.backends.empty() &&
                   std::all_of(cfg.backends.begin(), cfg.backends.end(),
                               [](const conf::BackendConfig& b) { return isLoopbackHost(b.address.host); });
  return all_local ? std::max(1u, cores / 2) : cores;
}

}  // namespace

Server::Server(conf::Config config) {
  context_.config() = std::move(config);
  context_.merge_budget.setTotal(context_.config().scatter.max_merge_bytes_total);
  context_.admissions.configure(serverBudgets(context_.config()), overloadSettings(context_.config()));
  context_.hot_keys.configure(hotKeySettings(context_.config()));
  context_.hot_key_pacer.configure(context_.config().overload.hot_key_max_per_second,
                                   std::chrono::milliseconds(context_.config().overload.queue_timeout_ms));
  context_.hot_key_stats.configure(context_.config().overload.hot_keys_tracked);
  context_.hot_key_auto_move.store(
      std::make_shared<const conf::HotKeyAutoMoveConfig>(context_.config().overload.hot_key_auto_move));
}

Server::~Server() {
  if (schema_) schema_->stop();
  if (moves_) moves_->stop();
  if (upkeep_) upkeep_->stop();
  if (metrics_) metrics_->stop();
  if (changes_) changes_->stop();
  if (admin_) admin_->stop();
  for (auto& w : workers_) w->stop();
  for (auto& w : workers_) w->join();
}

std::string Server::startTransactions() {
  const auto& cfg = context_.config();
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  context_.xa.configure(cfg.transactions.xid_prefix, std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                        cfg.fleet ? cfg.fleet->name : std::string());
  if (cfg.transactions.cross_backend != conf::CrossBackend::kAtomic) return {};
  if (cfg.fleet) {
    // Before any session can commit: a fleet id's decision must never go to SQLite.
    xa_fleet_ = std::make_shared<FleetXaStore>(*cfg.fleet);
    context_.xa.fleet = xa_fleet_;
  }
  std::string path = cfg.transactions.decision_log;
  if (path.empty()) path = cfg.cache_path.empty() ? std::string("shardproxy.xa.sqlite") : cfg.cache_path + ".xa";
  auto log = XaDecisionLog::open(path);
  if (!log) return "transactions.decision_log: " + log.error();
  context_.xa.log = std::shared_ptr<XaDecisionLog>(std::move(*log));
  // Two threads: a decision waiting on an fsync or on etcd does not hold
  // up the next one's start (each store serialises its own writes).
  decision_writers_ = std::make_unique<asio::thread_pool>(2);
  context_.xa.decision_writer = decision_writers_->get_executor();
  spdlog::info("cross-backend transactions: atomic (two-phase commit), global ids {}-..., decisions in {}",
               cfg.transactions.xid_prefix, cfg.fleet ? "etcd (" + cfg.fleet->etcd_prefix + "/xa/decisions/)" : path);
  return {};
}

std::string Server::start() {
  const auto& cfg = context_.config();
  // Until runUntilSignalled() handles it, a SIGHUP must not kill the process.
  std::signal(SIGHUP, SIG_IGN);
  context_.tls = std::make_shared<ServerTls>();
  if (auto err = context_.tls->load(cfg.server); !err.empty()) return err;
  for (const auto& backend : cfg.backends) {
    // A CA file that cannot be read is a start-up error, not a failure of every later connection.
    if (!backend.tls) continue;
    if (auto ctx = backendTlsContext(*backend.tls); !ctx) return fmt::format("backends {}: {}", backend.name, ctx.error());
  }
  maps_ = std::make_unique<ShardMapManager>(context_);
  if (auto err = maps_->startup(); !err.empty()) return err;
  // The roles in force (SQLite, else the config) before anything connects.
  ha_ = std::make_unique<HaCoordinator>(context_);
  ha_->loadTopology();
  if (auto defaults = readBackendDefaults(context_)) {
    context_.server_version = defaults->version + "-shardproxy";
    if (defaults->tracking) context_.tracking_defaults = *defaults->tracking;
  } else {
    spdlog::warn("default backend {} did not answer at start-up: clients are greeted as {}", cfg.default_backend,
                 context_.server_version);
  }
  if (!cfg.log.slow_query_file.empty()) {
    // Before the workers: each takes the log when it is built.
    auto log = std::make_shared<SlowQueryLog>();
    if (auto err = log->open(cfg.log.slow_query_file); !err.empty()) return err;
    context_.slow_log = std::move(log);
  }
  unsigned threads = cfg.server.threads ? cfg.server.threads : autoThreads(cfg);
  error_code ec;
  auto address = asio::ip::make_address(cfg.server.listen.host, ec);
  if (ec) {
    // A host name: resolve it once at start-up.
    asio::io_context io;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(cfg.server.listen.host, std::to_string(cfg.server.listen.port), ec);
    if (ec || results.empty()) return "cannot resolve listen address " + cfg.server.listen.host;
    address = results.begin()->endpoint().address();
  }
  tcp::endpoint endpoint(address, cfg.server.listen.port);
  if (auto err = startTransactions(); !err.empty()) return err;
  statement_limits_ = std::make_unique<StatementLimits>(cfg.statement_limits);
  context_.statement_limits = statement_limits_.get();
  for (unsigned i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>(context_, i, threads);
    if (auto err = w->listen(endpoint); !err.empty()) {
      return fmt::format("cannot listen on {}:{}: {}", cfg.server.listen.host, cfg.server.listen.port, err);
    }
    workers_.push_back(std::move(w));
  }
  std::vector<Worker*> workers;
  for (auto& w : workers_) workers.push_back(w.get());
  context_.workers = workers;
  // The schema-drift check reads every backend: on a worker's loop, so a slow
  // or down backend never delays start-up; differences are logged as warnings.
  asio::co_spawn(workers_.front()->io(), logSchemaDrift(context_.config(), context_.shard_map.load()), asio::detached);
  // Replicas' roles and lag, before the first client: a session's first read
  // finds them probed or not yet known (then the primary answers).
  ha_->start(std::vector<PoolHost*>(workers.begin(), workers.end()));
  context_.ha = ha_.get();
  for (auto& w : workers_) w->start();
  maps_->attachWorkers(std::vector<PoolHost*>(workers.begin(), workers.end()));
  maps_->onBackendsChanged([ha = ha_.get()](const BackendDiff& diff) { ha->backendsChanged(diff.added, diff.removed); });
  // Background work (moves, archiving, partition upkeep, schema changes) yields
  // to the foreground: the gate before any of them starts.
  background_gate_ = std::make_unique<BackgroundGate>(cfg.background);
  context_.background = background_gate_.get();
  background_governor_ = std::make_unique<BackgroundGovernor>(context_, *background_gate_);
  background_governor_->start();
  if (context_.xa.log) {
    // Prepared branches a crash left: resolved now and every recovery_interval_ms.
    xa_recovery_ = std::make_unique<XaRecovery>(context_);
    xa_recovery_->start();
  }
  moves_ = std::make_unique<MoveCoordinator>(context_, *maps_);
  moves_->start();  // resumes moves a restart interrupted
  context_.moves = moves_.get();
  schema_ = std::make_unique<SchemaCoordinator>(context_);
  if (cfg.fleet) {
    // Serving already (the cached or file map); the fleet's map follows once etcd answers.
    fleet_ = std::make_unique<FleetAgent>(context_, *maps_);
    context_.fleet = fleet_.get();
    maps_->attachFleet(fleet_.get());
    // Role changes of replication groups go through the fleet (docs/availability.md, "In a fleet").
    fleet_->attachHa(ha_.get());
    ha_->attachFleet(fleet_->roles());
    // Schema changes claim their tables and keep their records in etcd too.
    schema_->attachFleet(fleet_->schemaLink());
    // Commit decisions are fenced by this agent's lease (none until it has a session).
    if (xa_fleet_) xa_fleet_->attach(fleet_.get());
    fleet_->start();
  }
  // The hot-key policy (overload.hot_key_auto_move; RELOAD turns it on and
  // off) on the move thread; after the fleet agent: in a fleet it asks
  // whether this proxy holds ha/leader.
  hot_key_mover_ = std::make_unique<HotKeyMover>(context_, *moves_);
  hot_key_mover_->start();
  schema_->start();  // resumes schema changes a restart interrupted (in a fleet: once claimed again)
  context_.schema_changes = schema_.get();
  context_.schema = schema_.get();
  if (cfg.changes.enabled) {
    changes_ = std::make_unique<changes::ChangeService>(context_);
    if (auto err = changes_->start(); !err.empty()) return err;
    context_.changes = changes_.get();
  }
  if (cfg.server.admin_listen) {
    admin_ = std::make_unique<AdminServer>(context_, *maps_);
    if (auto err = admin_->start(); !err.empty()) return err;
  }
  if (cfg.server.metrics_listen) {
    metrics_ = std::make_unique<MetricsServer>(context_);
    if (auto err = metrics_->start(); !err.empty()) return err;
  }
  if (auto err = loadArchivedMonths(context_); !err.empty()) {
    spdlog::warn("archived months not loaded ({}): writes into dropped months are not refused", err);
  }
  upkeep_ = std::make_unique<PartitionUpkeep>(context_);
  upkeep_->start();  // only when partitions.check_every is set
  spdlog::info("shardproxy listening on {}:{} with {} worker threads; default backend {}{}", cfg.server.listen.host,
               cfg.server.listen.port, threads, cfg.default_backend,
               !context_.tls->enabled()        ? std::string()
               : cfg.server.tls_ca.empty() ? "; TLS offered (" + cfg.server.tls_cert + ")"
                                           : "; TLS offered (" + cfg.server.tls_cert + "), client certificates verified "
                                                 "against " + cfg.server.tls_ca);
  return {};
}

void Server::runUntilSignalled() {
  asio::io_context io;
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const error_code& ec, int sig) {
    if (!ec) spdlog::info("received signal {}, shutting down", sig);
    io.stop();
  });
  // SIGHUP: RELOAD SHARD MAP, the TLS certificate and key (new handshakes
  // use them; sessions keep theirs), backend CA files (new connections).
  // Runs on this (otherwise idle) thread; the manager serializes it with
  // admin reloads.
  asio::signal_set hangup(io, SIGHUP);
  std::function<void(const error_code&, int)> onHangup = [&](const error_code& ec, int) {
    if (ec) return;
    auto outcome = maps_->reload("sighup");
    spdlog::info("SIGHUP reload: {}", outcome.message);
    if (context_.tls->enabled()) {
      if (auto err = context_.tls->reload(); !err.empty()) {
        spdlog::error("SIGHUP: TLS certificate not reloaded, the previous one stays in force: {}", err);
      } else {
        spdlog::info("SIGHUP: TLS certificate reloaded from {}", context_.config().server.tls_cert);
      }
    }
    forgetBackendTlsContexts();
    if (context_.slow_log) {
      // Log rotation: the file was moved away; write to a new one at the same path.
      if (auto err = context_.slow_log->reopen(); !err.empty()) spdlog::error("SIGHUP: {}", err);
    }
    hangup.async_wait(onHangup);
  };
  hangup.async_wait(onHangup);
  io.run();
  shutdown();
}

void Server::shutdown() {
  context_.shutting_down = true;
  if (xa_recovery_) xa_recovery_->stop();
  if (background_governor_) background_governor_->stop();  // it asks the workers: before they stop
  if (ha_) ha_->stop();
  if (schema_) schema_->stop();
  if (moves_) moves_->stop();
  if (upkeep_) upkeep_->stop();
  if (metrics_) metrics_->stop();
  if (changes_) changes_->stop();
  if (admin_) admin_->stop();
  if (fleet_) {
    if (xa_fleet_) xa_fleet_->attach(nullptr);  // commits from now on are refused (rolled back)
    fleet_->stop();  // revokes the lease: the proxy leaves SHOW FLEET at once
    maps_->attachFleet(nullptr);
    if (ha_) ha_->attachFleet(nullptr);
  }
  for (auto& w : workers_) w->beginShutdown();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(context_.config().server.shutdown_grace_ms);
  while (context_.sessions.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Sessions that became idle since the last pass are closed too.
    for (auto& w : workers_) w->beginShutdown();
  }
  if (auto left = context_.sessions.load(); left > 0) {
    spdlog::warn("shutdown grace period over with {} sessions still busy; closing them", left);
  }
  for (auto& w : workers_) w->stop();
  for (auto& w : workers_) w->join();
  spdlog::info("shardproxy stopped");
}

}  // namespace sp::proxy
