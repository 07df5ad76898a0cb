// Process-wide state shared by all worker threads: the configuration (read-only
// after start-up) and a few atomic counters and flags.
//
// The configuration is held behind a pointer to a forward-declared
// conf::Config: nearly every server file includes this header, and only the
// files that read the configuration include conf/config.hpp (or one section
// of it), so a change there rebuilds those alone (docs/architecture.md, "Build time").
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <memory>
#include <optional>
#include <string_view>

#include "protocol/session_track.hpp"
#include "proxy/core/backend_admission.hpp"
#include "proxy/core/hot_key_gate.hpp"
#include "proxy/core/hot_key_pacer.hpp"
#include "proxy/core/hot_key_tracker.hpp"
#include "proxy/core/host_limits.hpp"
#include "proxy/core/lifecycle_stats.hpp"
#include "proxy/core/change_stats.hpp"
#include "proxy/core/replica_health.hpp"
#include "proxy/core/topology.hpp"
#include "proxy/core/write_hold.hpp"
#include "proxy/core/xa_registry.hpp"
#include "routing/merge/merge_budget.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::conf {
struct Config;
struct HotKeyAutoMoveConfig;
}  // namespace sp::conf

namespace sp::routing {
struct ArchivedMonths;
}  // namespace sp::routing

namespace sp::proxy {

class Worker;
class FleetAgent;
class SlowQueryLog;
class MoveCoordinator;
class HaCoordinator;
class SchemaChangeService;
namespace changes {
class ChangeService;
}
class SchemaCoordinator;
class BackgroundGate;
class StatementLimits;
class ServerTls;

struct ProxyContext {
  ProxyContext();  // an empty (default) configuration
  ~ProxyContext();
  ProxyContext(const ProxyContext&) = delete;
  ProxyContext& operator=(const ProxyContext&) = delete;

  // Read-only once the workers start; set (assigned whole) before.
  conf::Config& config() { return *config_; }
  const conf::Config& config() const { return *config_; }

  std::string server_version = "5.5.5-10.11.0-MariaDB-shardproxy";
  // What a new client session tracks (CLIENT_SESSION_TRACK): the default
  // backend's global session_track_* values, read at start-up with the
  // version (MariaDB's built-in defaults when it did not answer).
  protocol::TrackingSettings tracking_defaults = protocol::defaultTrackingSettings();
  std::atomic<uint32_t> next_connection_id{1};
  std::atomic<uint32_t> sessions{0};
  std::atomic<uint32_t> sessions_in_transaction{0};
  // Global (cross-backend, XA) transactions: ids, open ones, recovery, counters.
  XaRegistry xa;
  std::atomic<uint64_t> statements{0};
  std::atomic<bool> shutting_down{false};
  // Hostile clients (SHOW SESSIONS on the admin port): connections refused
  // before the handshake, and sockets closed before or after login.
  std::atomic<uint64_t> refused_max_connections{0};  // server.max_connections
  std::atomic<uint64_t> refused_per_host{0};         // server.max_connections_per_host
  std::atomic<uint64_t> handshake_timeouts{0};       // server.handshake_timeout_ms
  std::atomic<uint64_t> handshake_too_large{0};      // server.max_handshake_packet_bytes
  std::atomic<uint64_t> idle_timeouts{0};            // server.wait_timeout_s
  std::atomic<uint64_t> write_timeouts{0};           // server.net_write_timeout_s
  // TLS (server.tls_cert): the certificate clients see (never null once the
  // server started; off when not configured), sessions that are encrypted
  // now, and TLS handshakes that failed.
  std::shared_ptr<ServerTls> tls;
  std::atomic<uint32_t> tls_sessions{0};
  std::atomic<uint64_t> tls_handshake_failures{0};
  // Observability (docs/observability.md): admin-port commands, shard-map
  // reloads (set by ShardMapManager), and the slow-query log (null: off).
  std::atomic<uint64_t> admin_commands{0};
  std::atomic<uint64_t> admin_errors{0};
  std::atomic<uint64_t> reloads_applied{0};
  std::atomic<uint64_t> reloads_refused{0};
  std::atomic<int64_t> last_reload_unix_ms{0};  // the last map published (start-up included)
  std::shared_ptr<SlowQueryLog> slow_log;
  LifecycleStats lifecycle;  // partition upkeep and archive runs
  ChangeStats change_stats;  // the change stream (proxy/changes/)
  // Months dropped by ARCHIVE ... BEFORE (routing/archived_months.hpp); null: none known.
  std::atomic<std::shared_ptr<const routing::ArchivedMonths>> archived_months;
  // Every server's role and replication state (proxy/ha/replica_monitor.hpp);
  // null until the first probe, and always when no backend lists replicas.
  std::atomic<std::shared_ptr<const ReplicaHealth>> replica_health;
  // Which server is each backend's primary now (topology.hpp); set before
  // the workers start, replaced whole by SWITCHOVER / FAILOVER / REJOIN.
  std::atomic<std::shared_ptr<const Topology>> topology;
  // Reads on replicas (docs/availability.md): statements a replica answered,
  // read-your-writes waits that succeeded, and those that gave up (the primary answered).
  std::atomic<uint64_t> replica_reads{0};
  std::atomic<uint64_t> causal_waits{0};
  std::atomic<uint64_t> causal_fallbacks{0};
  HostConnectionLimiter hosts;
  // Logged-in sessions per user name (users[].max_connections); the same
  // counter keyed by user instead of address.
  HostConnectionLimiter users;
  std::atomic<uint64_t> refused_per_user{0};         // users[].max_connections
  // Sessions holding a backend connection between statements (pinned), per
  // user (users[].max_pinned_connections), and statements refused for it.
  HostConnectionLimiter pinned_by_user;
  std::atomic<uint64_t> refused_pinned{0};
  // Scatter statements refused because every concurrent merge together
  // reached scatter.max_merge_bytes_total (merge_budget.hpp).
  std::atomic<uint64_t> refused_merge_memory{0};
  routing::MergeBudget merge_budget;  // its total set from the config at start-up
  // Every server's concurrency budget (backends[].max_active_statements,
  // overload:), set at start-up and by each RELOAD.
  BackendAdmissions admissions;
  // Hot keys (overload.hot_key_*): writes to one key value serialised, and
  // statements counted per key value for SHOW HOT KEYS; set like admissions.
  HotKeyGate hot_keys;
  HotKeyPacer hot_key_pacer;  // overload.hot_key_max_per_second
  HotKeyTracker hot_key_stats;
  // The hot-key policy (overload.hot_key_auto_move; proxy/move/hot_key_mover.hpp):
  // its keys as the config or the last RELOAD SHARD MAP set them (null until
  // set: off), and the moves it started or had refused.
  std::atomic<std::shared_ptr<const conf::HotKeyAutoMoveConfig>> hot_key_auto_move;
  std::atomic<uint64_t> hot_key_auto_moves_started{0};
  std::atomic<uint64_t> hot_key_auto_moves_refused{0};
  // Every worker, set once before they start (KILL finds a session on any of them).
  std::vector<Worker*> workers;
  // The fleet membership (fleet: in the config), set once before the admin
  // port opens; null when the proxy works alone.
  FleetAgent* fleet = nullptr;
  std::atomic<bool> fleet_session{false};        // set by the fleet agent
  std::atomic<int64_t> fleet_map_revision{0};    // the fleet map applied last

  // The shard map in force. Each statement plans against one snapshot; a
  // reload publishes a new immutable map (null: no sharded tables).
  std::atomic<std::shared_ptr<const routing::CompiledShardMap>> shard_map;
  // Keys of online moves and their cut-over hold (write_hold.hpp).
  WriteHold write_hold;
  MoveCoordinator* moves = nullptr;  // the admin commands MOVE ..., SHOW MOVES (set at start-up)
  HaCoordinator* ha = nullptr;       // SWITCHOVER / FAILOVER / REJOIN BACKEND (proxy/ha/, set at start-up)
  // DDL on logical tables (proxy/schema/, set at start-up; null: refused as before).
  SchemaChangeService* schema_changes = nullptr;
  SchemaCoordinator* schema = nullptr;  // the same, for the admin port's commands
  changes::ChangeService* changes = nullptr;  // the change stream (proxy/changes/; null: changes.enabled is off)
  // Where background work yields to the foreground (background_gate.hpp; set
  // at start-up, before any background work starts).
  BackgroundGate* background = nullptr;
  // statement_limits: per user and per digest (statement_limit_table.hpp; set at
  // start-up, before the workers accept).
  StatementLimits* statement_limits = nullptr;

 private:
  std::unique_ptr<conf::Config> config_;  // never null
};

// How to reach a backend's current primary (its pool's settings): the
// configured server until a SWITCHOVER or FAILOVER changed it. nullopt:
// no such backend. Every subsystem that opens its own connections to a
// backend's primary (moves, partitions, archives) asks here.
std::optional<conf::BackendConfig> currentPrimary(const ProxyContext& context, std::string_view backend);

// The configuration with every backend's address and account replaced by its
// current primary's: for code that takes a whole conf::Config (the
// schema-drift check).
conf::Config configWithCurrentPrimaries(const ProxyContext& context);

}  // namespace sp::proxy
