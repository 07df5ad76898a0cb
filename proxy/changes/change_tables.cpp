#include "proxy/changes/change_tables.hpp"

#include <algorithm>

namespace sp::proxy::changes {

ChangeTables::ChangeTables(const routing::CompiledShardMap& map, const std::vector<std::string>& only) {
  for (const auto& name : only) {
    if (!map.findTable(name)) unknown_.push_back(name);
  }
  for (const auto& rule : map.tables()) {
    if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const std::string& n) {
          return map.findTable(n) == &rule;
        })) {
      continue;
    }
    const LogicalTable logical{rule.name, rule.key};
    for (const auto& shard : rule.shards) {
      for (const auto* physical : {&shard.physical_table, &shard.archive_table, &shard.backfill_table}) {
        if (!physical->empty()) by_physical_.emplace(*physical, logical);
      }
    }
  }
}

const LogicalTable* ChangeTables::find(std::string_view physical_table) const {
  auto it = by_physical_.find(std::string(physical_table));
  return it == by_physical_.end() ? nullptr : &it->second;
}

}  // namespace sp::proxy::changes
