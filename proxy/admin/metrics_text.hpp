// The Prometheus text exposition format (version 0.0.4) of the proxy's
// metrics: a pure function of a MetricsSnapshot, so tests compare exact text.
// Series and their meaning: docs/observability.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/backend/backend_pool.hpp"
#include "proxy/core/backend_admission.hpp"
#include "proxy/core/hot_key_gate.hpp"
#include "proxy/core/hot_key_pacer.hpp"
#include "proxy/core/replica_health.hpp"
#include "proxy/core/topology.hpp"
#include "proxy/observe/metrics.hpp"

namespace sp::proxy {

// Everything one scrape shows, summed over the worker threads.
struct MetricsSnapshot {
  std::string version;
  double start_time_seconds = 0;
  WorkerMetrics statements;
  struct Backend {
    std::string name;
    PoolStats pool;  // summed over workers (down: every worker's pool is down)
  };
  std::vector<Backend> backends;
  uint64_t plan_cache_hits = 0, plan_cache_misses = 0, plan_cache_evictions = 0, plan_cache_entries = 0;
  uint64_t digest_entries = 0, digest_evictions = 0;
  uint32_t sessions = 0, authenticated = 0, in_transaction = 0, pinned = 0;
  std::map<std::string, uint32_t> users;  // logged-in sessions per user (users come from the config: bounded)
  uint64_t refused_max_connections = 0, refused_per_host = 0;
  uint64_t handshake_timeouts = 0, handshake_too_large = 0, idle_timeouts = 0, write_timeouts = 0;
  uint64_t admin_commands = 0, admin_errors = 0;
  uint64_t shard_map_version = 0;
  uint64_t reloads_applied = 0, reloads_refused = 0;
  double last_reload_seconds = 0;
  // Fleets (issue 19): -1 when the proxy is not in a fleet.
  int64_t fleet_session = -1;       // 1: in session with etcd (lease, watch), 0: not
  int64_t fleet_map_revision = -1;  // etcd revision of the fleet map in force
  // Data lifecycle (proxy/core/lifecycle_stats.hpp).
  uint64_t upkeep_runs_ok = 0, upkeep_runs_failed = 0, partitions_created = 0;
  double last_upkeep_seconds = 0;
  uint64_t missing_months = 0, pmax_rows = 0;
  uint64_t archived_rows = 0, archive_batches = 0, archive_retries = 0, dropped_partitions = 0;
  // The change stream (proxy/core/change_stats.hpp).
  uint64_t change_events = 0, change_transactions = 0, change_maintenance_rows = 0;
  uint64_t change_consumers_refused = 0, change_reader_errors = 0;
  uint64_t change_consumers = 0;
  int64_t change_lag_seconds = 0;
  // Replication groups (docs/availability.md): the monitor's last picture
  // (null: nothing watched) and the reads replicas answered.
  std::shared_ptr<const ReplicaHealth> servers;
  std::shared_ptr<const Topology> topology;  // the roles in force (SWITCHOVER / FAILOVER change them)
  uint64_t replica_reads = 0, causal_waits = 0, causal_fallbacks = 0;
  // Every server's concurrency budget (backends[].max_active_statements).
  std::vector<AdmissionStats> admissions;
  // Hot-key write serialisation (overload.hot_key_concurrency; 0: off).
  HotKeyStats hot_keys;
  uint32_t hot_key_concurrency = 0;
  // Hot-key pacing (overload.hot_key_max_per_second; 0: off).
  HotKeyPaceStats hot_key_pace;
  uint32_t hot_key_max_per_second = 0;
  // The hot-key policy (overload.hot_key_auto_move): moves it started, and those the coordinator refused.
  uint64_t hot_key_auto_moves_started = 0, hot_key_auto_moves_refused = 0;
  // Global (cross-backend) transactions (proxy/core/xa_registry.hpp).
  struct Transactions {
    uint64_t committed_one_phase = 0, committed_two_phase = 0, rolled_back = 0, commit_failed = 0;
    uint64_t participants = 0, prepare_us = 0, commit_us = 0;
    uint64_t recovery_passes = 0, recovered_commits = 0, recovered_rollbacks = 0, recovery_errors = 0;
    uint64_t open = 0, in_doubt = 0;
    uint64_t recovered_for_others = 0, decisions_unknown = 0;  // in a fleet
  } transactions;
};

// Builds exposition text: `# HELP`/`# TYPE` once per family, then samples.
class ExpositionWriter {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, const Labels& labels, uint64_t value);
  void sample(std::string_view name, const Labels& labels, double value);
  // name_bucket{..., le="..."} (cumulative), name_sum, name_count.
  void histogram(std::string_view name, const Labels& labels, const Histogram& h);
  std::string take() { return std::move(out_); }

 private:
  void series(std::string_view name, std::string_view suffix, const Labels& labels, std::string_view le);
  std::string out_;
};

// "1", "0.25", "2.5e-05", "+Inf": the shortest text that reads back as `value`.
std::string formatSampleValue(double value);

std::string renderMetrics(const MetricsSnapshot& snapshot);

}  // namespace sp::proxy
