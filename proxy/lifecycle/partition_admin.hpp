// SHOW PARTITIONS and ENSURE PARTITIONS (docs/admin.md, "Data lifecycle"):
// the month partitions of every shard of the month-partitioned tables, read
// from information_schema.PARTITIONS, and the REORGANIZE of pmax that adds
// the next months. Runs on the admin thread or the upkeep thread.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/lifecycle/lifecycle_links.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"
#include "routing/map/month.hpp"
#include "routing/map/partition_layout.hpp"

namespace sp::proxy {

// One physical table of a month-partitioned logical table.
struct PartitionTarget {
  std::string table;     // logical
  std::string shard;     // shard name
  std::string physical;  // physical table
  std::string backend;
};

// The shards of the month-partitioned tables in `map`; `table` (empty: all)
// must name one of them, else the error says which tables qualify.
std::expected<std::vector<PartitionTarget>, std::string> partitionTargets(const routing::CompiledShardMap* map,
                                                                         std::string_view table);

// information_schema.PARTITIONS of one physical table, in bound order (an
// error when the table does not exist).
awaitable<std::expected<std::vector<routing::PartitionRow>, std::string>> readPartitions(LifecycleLinks& links,
                                                                                         const PartitionTarget& t);

// The date of `as_of`, or of the system clock in UTC; and its month.
routing::CivilDate lifecycleToday(const std::optional<routing::DateTimeValue>& as_of);
routing::MonthIndex lifecycleMonth(const std::optional<routing::DateTimeValue>& as_of);

awaitable<std::expected<LocalResult, std::string>> showPartitions(ProxyContext& context, std::string_view table,
                                                                  routing::MonthIndex now);

struct EnsureOutcome {
  LocalResult result;          // one row per shard
  uint64_t partitions_added = 0;
  uint64_t failed_shards = 0;
  uint64_t missing_months = 0; // months still missing afterwards (failed shards)
  uint64_t pmax_rows = 0;      // rows in pmax over all shards afterwards
};
// `background`: the periodic upkeep's run, whose tables yield to the
// foreground (proxy/core/background_gate.hpp); ENSURE PARTITIONS does not wait.
awaitable<std::expected<EnsureOutcome, std::string>> ensurePartitions(ProxyContext& context, std::string_view table,
                                                                      uint32_t ahead, routing::MonthIndex now,
                                                                      bool background = false);

}  // namespace sp::proxy
