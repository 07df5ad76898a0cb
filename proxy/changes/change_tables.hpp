// Which physical tables of the binary logs are which logical table: every
// shard's table of a streamed logical table, and its archive and backfill
// tables (rows there are rows of the logical table too). Physical names do
// not change when buckets move between shards, so a resolver built from one
// map version stays right for the buckets of every later one. Pure.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "routing/map/shard_map.hpp"

namespace sp::proxy::changes {

struct LogicalTable {
  std::string name;        // msg
  std::string key_column;  // conv_id
};

class ChangeTables {
 public:
  // `only`: the logical tables to stream (empty: every table of the map).
  // Names not in the map are returned by unknown().
  ChangeTables(const routing::CompiledShardMap& map, const std::vector<std::string>& only);
  const LogicalTable* find(std::string_view physical_table) const;
  const std::vector<std::string>& unknown() const { return unknown_; }
  bool empty() const { return by_physical_.empty(); }

 private:
  std::unordered_map<std::string, LogicalTable> by_physical_;
  std::vector<std::string> unknown_;
};

}  // namespace sp::proxy::changes
