// Months whose partitions ARCHIVE ... BEFORE dropped, per month-partitioned
// table, and the refusal of a write into one of them. After the months before
// 2024-12 are dropped, the table's first partition (p202412, unbounded below)
// would silently take a late row dated 2024-11: the proxy refuses it instead
// (9122 archived_month). Kept in the SQLite file (archive_progress rows of
// kind "retention"), loaded by the data lifecycle (proxy/lifecycle/archived_months.hpp)
// at start-up and replaced after each ARCHIVE run; planning only here.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "parser/classify.hpp"
#include "routing/map/month.hpp"
#include "routing/plan.hpp"

namespace sp::routing {

// Table names as ArchivedMonths keys them (ASCII lower case).
std::string lowerCaseTableName(std::string_view name);

struct ArchivedMonths {
  std::map<std::string, routing::MonthIndex> first_live;  // lower-case logical table -> first month kept
  std::optional<routing::MonthIndex> firstLive(std::string_view table) const;
};

// A refused plan when `plan` inserts rows dated before the table's first
// kept month; nullopt otherwise (reads, other tables, nothing archived).
std::optional<routing::Plan> refuseArchivedMonthWrite(const routing::Plan& plan, parser::StatementKind kind,
                                                      const ArchivedMonths* archived);

// Statements dated in dropped months of a table with `backfill:` (the shard
// map's backfill tables): a write entirely in dropped months is planned
// again onto the backfill table, a read reaching into them onto the union of
// the month table and the backfill table, a write spanning dropped and kept
// months is refused (9122: split it). nullopt: nothing to do (then
// refuseArchivedMonthWrite decides).
std::optional<routing::Plan> planBackfill(const routing::Plan& plan, parser::StatementKind kind,
                                          const ArchivedMonths* archived, std::string_view sql,
                                          const routing::PlannerInput& input);


}  // namespace sp::routing
