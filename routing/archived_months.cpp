#include "routing/archived_months.hpp"

#include <algorithm>


namespace sp::routing {

std::string lowerCaseTableName(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<routing::MonthIndex> ArchivedMonths::firstLive(std::string_view table) const {
  auto it = first_live.find(lowerCaseTableName(table));
  if (it == first_live.end()) return std::nullopt;
  return it->second;
}

std::optional<routing::Plan> refuseArchivedMonthWrite(const routing::Plan& plan, parser::StatementKind kind,
                                                      const ArchivedMonths* archived) {
  if (!archived || !plan.table || !plan.months || !plan.months->lo) return std::nullopt;
  if (kind != parser::StatementKind::kInsert && kind != parser::StatementKind::kReplace) return std::nullopt;
  auto first = archived->firstLive(plan.table->name);
  if (!first || *plan.months->lo >= *first) return std::nullopt;
  routing::Plan refused;
  refused.kind = routing::PlanKind::kRefused;
  refused.table = plan.table;
  refused.refusal = routing::Refusal{
      routing::RouteErrorCode::kArchivedMonth,
      "shardproxy: write into " + plan.table->name + " for month " + routing::formatMonthStart(*plan.months->lo) +
          ": the months before " + routing::formatMonthStart(*first) +
          " were archived (exported, then their partitions dropped by ARCHIVE ... BEFORE), so the row would land "
          "in another month's partition; load late rows of archived months into their export instead"};
  return refused;
}

std::optional<routing::Plan> planBackfill(const routing::Plan& plan, parser::StatementKind kind,
                                          const ArchivedMonths* archived, std::string_view sql,
                                          const routing::PlannerInput& input) {
  using Kind = parser::StatementKind;
  if (!archived || !plan.table || plan.table->backfill_template.empty() || !plan.months || !plan.months->lo) {
    return std::nullopt;
  }
  bool write = kind == Kind::kInsert || kind == Kind::kReplace || kind == Kind::kUpdate || kind == Kind::kDelete;
  if (!write && kind != Kind::kSelect) return std::nullopt;
  auto first = archived->firstLive(plan.table->name);
  if (!first || *plan.months->lo >= *first) return std::nullopt;
  if (write && (!plan.months->hi || *plan.months->hi >= *first)) {
    routing::Plan refused;
    refused.kind = routing::PlanKind::kRefused;
    refused.table = plan.table;
    refused.refusal = routing::Refusal{
        routing::RouteErrorCode::kArchivedMonth,
        "shardproxy: write into " + plan.table->name + " spans months before " + routing::formatMonthStart(*first) +
            " (archived: their rows go to the backfill table) and months from it (the month partitions): "
            "split the statement at " + routing::formatMonthStart(*first)};
    return refused;
  }
  const routing::CompiledShardMap* view = input.map.backfillView(write);
  if (!view) return std::nullopt;
  routing::PlannerInput in{*view,           input.default_backend, input.params,
                           input.split_in_lists, input.allow_scatter, input.multi_shard_writes,
                           input.limits};
  in.dialect = input.dialect;
  in.names = input.names;
  return routing::planQuery(sql, in);
}

}  // namespace sp::routing
