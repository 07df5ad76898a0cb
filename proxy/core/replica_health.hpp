// What the replica monitor (proxy/ha/) last saw of every server: a snapshot
// published whole, so a session picks a replica from one consistent picture
// without locks (ProxyContext::replica_health).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::proxy {

enum class ServerState : uint8_t {
  kUnknown,            // not probed yet
  kUp,                 // answers; a replica replicates and is within ha.max_replica_lag_ms
  kDown,               // probes failed for ha.failure_timeout_ms
  kLagging,            // a replica further behind than ha.max_replica_lag_ms
  kBrokenReplication,  // a replica whose IO or SQL thread is stopped, or that replicates from no one
};
std::string_view serverStateName(ServerState state);

struct ServerHealth {
  std::string backend;  // the replication group: the backend's name
  std::string name;     // the server's own name (the backend's for its primary)
  std::string address;
  bool primary = false;  // the group's writer now (ProxyContext::topology)
  bool fenced = false;   // demoted by a failover: kept read-only, serves nothing until REJOIN
  ServerState state = ServerState::kUnknown;
  bool answered = false;  // the last probe got an answer
  // The last probe failed with the server's own ERR (full, the monitor's
  // account refused, a privilege): the server is alive although unusable
  // for the monitor.
  bool refused = false;
  bool read_only = false;
  // SHOW SLAVE STATUS (replicas): where it replicates from and how far behind.
  bool replicating = false;
  bool io_running = false;
  bool sql_running = false;
  std::optional<int64_t> lag_seconds;  // Seconds_Behind_Master; nullopt when NULL
  std::string source;                  // Master_Host:Master_Port
  std::string gtid_current_pos;
  // Semi-synchronous replication as a primary (rpl_semi_sync_master_*):
  // enabled, active now (it falls back to asynchronous after its timeout),
  // and where a commit waits (AFTER_SYNC or AFTER_COMMIT).
  bool semi_sync_enabled = false;
  bool semi_sync_active = false;
  std::string semi_sync_wait_point;
  std::string last_error;              // the probe's or the replication threads' last error
  int64_t checked_unix_ms = 0;         // the last probe that answered
  uint64_t probes = 0;
  uint64_t probe_failures = 0;
};

// Whether a replica may serve reads now: its last probe answered, both
// replication threads run and it is within ha.max_replica_lag_ms.
inline bool servesReads(const ServerHealth& s) {
  return !s.primary && !s.fenced && s.answered && s.state == ServerState::kUp;
}

// Whether promoting a replica of this primary can lose writes its clients
// were told were committed, in one line for SHOW BACKENDS (docs/availability.md).
std::string failoverLoss(const ServerHealth& primary);
// The same judged from what the last answered probe saw (a primary that
// just died): for FAILOVER's report.
std::string failoverLossFromLastProbe(const ServerHealth& primary);

struct ReplicaHealth {
  std::vector<ServerHealth> servers;  // per backend: its primary, then its replicas in config order
  const ServerHealth* find(std::string_view name) const {
    for (const auto& s : servers) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
};

}  // namespace sp::proxy
