// The availability part of the configuration (docs/availability.md): the
// replicas of a backend, the `ha:` section, and where a user's reads go.
// Its own header so that the replica monitor and the read split include only
// this, not the whole of config.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "conf/host_port.hpp"

namespace sp::conf {

// backends[].replicas[]: a server replicating from the backend's primary.
// user/password empty: the backend's account.
struct ReplicaConfig {
  std::string name;
  HostPort address;
  std::string user;
  std::string password;
  // Its own concurrency budget; unset: the backend's max_active_statements.
  std::optional<uint32_t> max_active_statements;
};

// users[].reads: where a user's plain reads outside transactions go by default.
enum class ReadTarget : uint8_t {
  kPrimary,  // everything on the primary (the default: as one server)
  kReplica,  // plain reads on a replica that is up and within ha.max_replica_lag_ms
};

struct HaConfig {
  uint32_t check_interval_ms = 500;         // how often each server's role and position are read
  uint32_t probe_timeout_ms = 1000;         // a probe that takes longer counts as failed
  uint32_t max_replica_lag_ms = 5000;       // a replica further behind serves no reads
  uint32_t causal_read_timeout_ms = 1000;   // read-your-writes wait on a replica before the primary serves
  // A primary unreachable for failure_timeout_ms is failed over by the proxy
  // itself (FAILOVER BACKEND), when a replica qualifies (docs/availability.md).
  bool auto_failover = false;
  uint32_t failure_timeout_ms = 5000;       // failed probes for this long mark a server down
  // The longest a SWITCHOVER / FAILOVER holds the backend's statements
  // (drain, catch-up, promotion); past it a switchover is undone and the
  // held statements are refused with 9141 (nothing ran).
  uint32_t switchover_timeout_ms = 5000;
};

}  // namespace sp::conf
