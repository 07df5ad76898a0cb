#include "routing/merge/merge_metadata.hpp"

#include <algorithm>
#include <vector>

namespace sp::routing {
namespace {

using protocol::ColumnType;

constexpr uint8_t kNotFixedDecimals = 39;

bool isBlob(ColumnType t) {
  return t == ColumnType::kTinyBlob || t == ColumnType::kMediumBlob || t == ColumnType::kLongBlob ||
         t == ColumnType::kBlob;
}

bool isString(ColumnType t) {
  return t == ColumnType::kVarString || t == ColumnType::kString || t == ColumnType::kVarchar || isBlob(t);
}

// Bytes per character of the collation's character set (utf8mb4, utf8mb3; others 1).
uint32_t mbMaxLen(uint16_t collation) {
  if (collation == 45 || collation == 46 || (collation >= 224 && collation <= 247) ||
      (collation >= 255 && collation <= 309) || (collation >= 2304 && collation <= 2559)) {
    return 4;
  }
  if (collation == 33 || collation == 83 || (collation >= 192 && collation <= 215) || collation == 223 ||
      (collation >= 2048 && collation <= 2303)) {
    return 3;
  }
  return 1;
}

}  // namespace

bool isMaterializedString(const protocol::ColumnDefinition41& column) {
  return isString(column.type) && column.decimals == 0;
}

protocol::ColumnDefinition41 materializedString(protocol::ColumnDefinition41 column) {
  if (!isString(column.type) || column.decimals != kNotFixedDecimals) return column;
  column.decimals = 0;
  if (isBlob(column.type)) {
    column.type = ColumnType::kBlob;
    column.column_length /= mbMaxLen(column.character_set);
  }
  return column;
}

bool sortsAfterGrouping(const MergeSpec& spec) {
  if (!spec.aggregate) return false;
  if (spec.limit && *spec.limit == 0) return false;  // the server answers LIMIT 0 without executing ("Zero limit")
  auto constant = [&](uint32_t c) {
    return std::find(spec.constant_columns.begin(), spec.constant_columns.end(), c) != spec.constant_columns.end();
  };
  // Aggregate mode: merged position i is shard column i, so the positions compare directly.
  std::vector<uint32_t> groups;
  for (uint32_t g : spec.group_by) {
    if (!constant(g)) groups.push_back(g);
  }
  std::vector<MergeSortKey> order;
  for (const auto& o : spec.order_by) {
    if (!constant(o.column)) order.push_back(o);
  }
  if (groups.empty() || order.empty()) return false;
  if (order.size() > groups.size()) return true;
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[k].column != groups[k] || order[k].descending != order[0].descending) return true;
  }
  return false;
}

void foldShardColumn(protocol::ColumnDefinition41& kept, const protocol::ColumnDefinition41& other) {
  if (!isString(kept.type) || !isString(other.type)) return;
  if (isMaterializedString(other) && !isMaterializedString(kept)) {
    std::string name = kept.name;  // the same on every shard; keep the first's strings
    kept.type = other.type;
    kept.column_length = other.column_length;
    kept.decimals = other.decimals;
    kept.name = std::move(name);
  }
}

std::optional<std::string> shardColumnMismatch(size_t index, const protocol::ColumnDefinition41& kept,
                                               const protocol::ColumnDefinition41& other) {
  const bool same_type = kept.type == other.type || (isString(kept.type) && isString(other.type));
  if (kept.name == other.name && same_type) return std::nullopt;
  return "column " + std::to_string(index + 1) + " is `" + other.name + "` (type " +
         std::to_string(static_cast<int>(other.type)) + ") on this shard and `" + kept.name + "` (type " +
         std::to_string(static_cast<int>(kept.type)) + ") on another: the physical tables differ (schema drift, "
         "SHOW SCHEMA DRIFT on the admin port); the merge is refused rather than mislabeled";
}

}  // namespace sp::routing
