#include "routing/map/partition_layout.hpp"

#include <algorithm>

namespace sp::routing {

namespace {

// "'2025-02-01'" -> the month index of 2025-02 (the first month NOT below the bound).
std::optional<MonthIndex> boundMonth(std::string_view description) {
  if (description.size() < 2 || description.front() != '\'' || description.back() != '\'') return std::nullopt;
  auto value = parseDateTime(description.substr(1, description.size() - 2));
  if (!value || !isMonthStart(*value)) return std::nullopt;
  return monthIndexOf(value->date);
}

}  // namespace

const MonthPartition* PartitionLayout::maxvalue() const {
  if (partitions.empty() || partitions.back().last) return nullptr;
  return &partitions.back();
}

std::expected<PartitionLayout, std::string> readPartitionLayout(const std::vector<PartitionRow>& rows) {
  PartitionLayout layout;
  if (rows.empty() || (rows.size() == 1 && rows[0].name.empty())) {
    return std::unexpected(std::string("the table is not partitioned"));
  }
  std::optional<MonthIndex> previous_bound;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    MonthPartition p{row, previous_bound, std::nullopt};
    if (row.description == "MAXVALUE") {
      if (i + 1 != rows.size()) return std::unexpected("partition " + row.name + " (MAXVALUE) is not the last");
      layout.partitions.push_back(std::move(p));
      break;
    }
    auto bound = boundMonth(row.description);
    if (!bound) {
      return std::unexpected("partition " + row.name + " has bound " + row.description +
                             ", not the first day of a month (RANGE COLUMNS on a DATE month column expected)");
    }
    if (previous_bound && *bound <= *previous_bound) {
      return std::unexpected("partition " + row.name + " has a bound below its predecessor's");
    }
    p.last = *bound - 1;
    previous_bound = *bound;
    layout.partitions.push_back(std::move(p));
  }
  if (!layout.maxvalue()) return std::unexpected(std::string("the table has no MAXVALUE partition (pmax)"));
  layout.covered_until = previous_bound;
  return layout;
}

std::vector<MonthIndex> missingMonths(const PartitionLayout& layout, MonthIndex now, uint32_t ahead) {
  std::vector<MonthIndex> out;
  // Without a bounded partition every month is in pmax.
  MonthIndex from = layout.covered_until ? std::max(now, *layout.covered_until) : now;
  for (MonthIndex m = from; m <= now + static_cast<MonthIndex>(ahead); ++m) out.push_back(m);
  return out;
}

std::string reorganizeStatement(std::string_view physical_table, const PartitionLayout& layout, MonthIndex now,
                                uint32_t ahead) {
  const MonthPartition* pmax = layout.maxvalue();
  if (!pmax) return {};
  MonthIndex target = now + static_cast<MonthIndex>(ahead);
  // Months between the last bound and now are added too: rows of those
  // months sit in pmax and move into their own partitions.
  MonthIndex from = layout.covered_until ? *layout.covered_until : now;
  if (from > target) return {};
  std::string sql = "ALTER TABLE `" + std::string(physical_table) + "` REORGANIZE PARTITION `" + pmax->row.name +
                    "` INTO (";
  for (MonthIndex m = from; m <= target; ++m) {
    sql += "PARTITION `" + partitionName(m) + "` VALUES LESS THAN ('" + formatMonthStart(m + 1) + "'), ";
  }
  sql += "PARTITION `" + pmax->row.name + "` VALUES LESS THAN (MAXVALUE))";
  return sql;
}

std::string formatMonth(MonthIndex m) { return formatMonthStart(m).substr(0, 7); }

}  // namespace sp::routing
