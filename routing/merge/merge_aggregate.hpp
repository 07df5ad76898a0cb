// Aggregate operator of the ResultMerger: merges the shards' partial
// aggregates per group. Requires every shard row to carry the group key
// columns (MergeSpec::group_by) and, per aggregate, what makes it mergeable:
// COUNT and SUM partials (summed exactly), MIN/MAX, AVG as SUM plus a COUNT
// helper, COUNT/SUM(DISTINCT x) with x as a helper the shards grouped by.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/resultset.hpp"
#include "routing/merge/merge_compare.hpp"
#include "routing/merge/merge_spec.hpp"

namespace sp::routing {

using MergedRow = std::vector<std::optional<std::string>>;

class GroupAggregator {
 public:
  GroupAggregator(const MergeSpec& spec, const std::vector<protocol::ColumnDefinition41>& shard_columns);

  // Folds one shard row (all shard columns) into its group; returns the bytes it added.
  size_t add(MergedRow row);
  // One merged row per group, in first-seen order; for no GROUP BY exactly one
  // row even without input (COUNT 0, other aggregates NULL).
  std::vector<MergedRow> finish();
  // Set when a computed column (MergeOp::kComputed) could not be evaluated
  // exactly; finish() then returns no rows.
  const std::optional<std::string>& failure() const { return failure_; }

 private:
  struct Group {
    MergedRow values;
    // Per column: distinct value key -> value (k*Distinct columns only).
    std::vector<std::unordered_map<std::string, std::string>> distinct;
  };

  size_t merge(Group& group, MergedRow& row);
  void finalize(Group& group) const;
  void compute(MergedRow& row);  // kComputed columns, over the finalized values

  MergeSpec spec_;  // a copy: the owning ResultMerger may be moved
  std::vector<ValueClass> classes_;
  std::vector<uint32_t> avg_scales_;
  std::vector<protocol::ColumnDefinition41> columns_;
  std::optional<std::string> failure_;
  std::unordered_map<std::string, size_t> index_;  // group key -> groups_ position
  std::vector<Group> groups_;
};

// Decimal or float sum of two non-NULL values of class `cls`.
std::string addValues(ValueClass cls, const std::string& a, const std::string& b);

}  // namespace sp::routing
