// Counters of the data-lifecycle jobs (partition upkeep, archive runs), read
// by the metrics endpoint (docs/observability.md) and SHOW STATS. Written by
// the admin and upkeep threads, read by scrapes: atomics, no locks.
#pragma once
#include <atomic>
#include <cstdint>

namespace sp::proxy {

struct LifecycleStats {
  // Partition upkeep: automatic runs and ENSURE PARTITIONS by hand.
  std::atomic<uint64_t> upkeep_runs_ok{0};
  std::atomic<uint64_t> upkeep_runs_failed{0};   // a run with at least one failed shard
  std::atomic<uint64_t> partitions_created{0};
  std::atomic<int64_t> last_upkeep_unix_s{0};    // end of the last run, ok or not
  std::atomic<uint64_t> missing_months{0};       // after the last run (failed shards count ahead+1)
  std::atomic<uint64_t> pmax_rows{0};            // rows in pmax over all shards after the last run
  // Archive runs (ARCHIVE ...).
  std::atomic<uint64_t> archived_rows{0};
  std::atomic<uint64_t> archive_batches{0};
  std::atomic<uint64_t> archive_retries{0};      // batches whose two counts differed
  std::atomic<uint64_t> dropped_partitions{0};
};

}  // namespace sp::proxy
