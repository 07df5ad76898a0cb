// `changes:` of the configuration (docs/changes.md): the change stream of
// logical tables, served on its own HTTP listen address and through the
// admin port. Off unless `listen` is set or `enabled: true`.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conf/host_port.hpp"

namespace sp::conf {

struct ChangesConfig {
  bool enabled = false;               // the admin command works (also without `listen`)
  std::optional<HostPort> listen;     // GET /changes over HTTP; absent = no HTTP endpoint
  std::vector<std::string> tables;    // logical tables that may be streamed; empty = every sharded table
  std::string source = "replicas";    // replicas: a healthy replica of each backend when it has one; primary
  uint32_t max_events_per_second = 20'000;  // per consumer (0: no limit)
  uint32_t max_consumers = 8;         // streams open at once (each reads every backend's binlog); more get 9181
  uint32_t buffer_events = 1000;      // row changes one consumer's stream holds at most before the reader waits
  uint32_t max_transaction_events = 100'000;  // a transaction bigger than this is refused (9184) rather than buffered
  uint32_t heartbeat_ms = 1000;       // the backends' binlog heartbeat; an idle HTTP stream gets a {"heartbeat"} line
  uint32_t send_timeout_ms = 60'000;  // an HTTP consumer that reads nothing this long is cut off
  bool allow_remote = false;          // HTTP peers other than loopback (no authentication: keep it on a trusted network)
  uint32_t replica_server_id = 3100000000u;  // server_id of the stream's binlog readers (+ consumer number)
};

}  // namespace sp::conf
