// The monthly RANGE COLUMNS partitions of one physical table, as
// information_schema.PARTITIONS describes them, and what upkeep must add so
// the next months exist (tg design, section 3: one to three future months
// plus pmax). Pure: the proxy reads the rows and runs the statement built here.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/map/month.hpp"

namespace sp::routing {

// One row of information_schema.PARTITIONS for the table.
struct PartitionRow {
  std::string name;         // PARTITION_NAME
  std::string description;  // PARTITION_DESCRIPTION: "'2025-02-01'" or "MAXVALUE"
  uint64_t rows = 0;        // TABLE_ROWS (InnoDB's estimate)
  uint64_t data_bytes = 0;  // DATA_LENGTH
  uint64_t index_bytes = 0; // INDEX_LENGTH
};

// A partition with its month range [first, last] (inclusive month indexes).
// Monthly partitions have first == last; the first partition of a table and
// a partition that replaced a dropped neighbour may span several months;
// pmax (MAXVALUE) has no last.
struct MonthPartition {
  PartitionRow row;
  std::optional<MonthIndex> first;  // nullopt: unbounded below (the table's first partition)
  std::optional<MonthIndex> last;   // nullopt: MAXVALUE
};

struct PartitionLayout {
  std::vector<MonthPartition> partitions;  // in bound order
  // The first month no bounded partition covers: everything from here on is
  // in the MAXVALUE partition. nullopt when the table has no bounded partition.
  std::optional<MonthIndex> covered_until;
  const MonthPartition* maxvalue() const;  // nullptr when there is none
};

// Builds the layout; an error when the rows are not a month-partitioned table
// (not partitioned, a bound that is not a month's first day, no MAXVALUE).
std::expected<PartitionLayout, std::string> readPartitionLayout(const std::vector<PartitionRow>& rows);

// Months in [now, now + ahead] that no bounded partition covers (their rows
// would land in pmax), ascending.
std::vector<MonthIndex> missingMonths(const PartitionLayout& layout, MonthIndex now, uint32_t ahead);

// ALTER TABLE ... REORGANIZE PARTITION <maxvalue> INTO (p<month> ..., <maxvalue>)
// adding one partition per month from covered_until to now + ahead; empty when
// nothing is missing. MariaDB moves rows already in pmax into the new months.
std::string reorganizeStatement(std::string_view physical_table, const PartitionLayout& layout, MonthIndex now,
                                uint32_t ahead);

// "2025-03" for a month index.
std::string formatMonth(MonthIndex m);

}  // namespace sp::routing
