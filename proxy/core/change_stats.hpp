// Counters of the change stream (proxy/changes/, docs/observability.md):
// written by the streams' threads (HTTP and admin), read by scrapes and
// SHOW CHANGE STREAMS. Atomics, no locks.
#pragma once
#include <atomic>
#include <cstdint>

namespace sp::proxy {

struct ChangeStats {
  std::atomic<uint64_t> events{0};             // row changes sent to consumers
  std::atomic<uint64_t> transactions{0};       // transactions with row changes sent
  std::atomic<uint64_t> maintenance_rows{0};   // row changes dropped as maintenance (skip_replication)
  std::atomic<uint64_t> consumers_refused{0};  // streams refused at changes.max_consumers (9181)
  std::atomic<uint64_t> reader_errors{0};      // binlog readers lost and reopened
  std::atomic<uint32_t> consumers{0};          // streams open now
  // The largest lag among open streams at their last send: seconds between
  // the commit of the transaction sent and the send (0 when caught up).
  std::atomic<int64_t> lag_seconds{0};
};

}  // namespace sp::proxy
