// INSERT / REPLACE into a sharded table: every row must carry the key as an
// exact value; for month tables each row's month column must be the first day
// of its time column's month. Rows landing on several shards are refused, or
// split into one statement per shard under multi_shard_writes: best_effort.
#include <algorithm>

#include "routing/conditions.hpp"
#include "routing/planner_detail.hpp"

namespace sp::routing::detail {
namespace {

// The value as written (already quoted when it is a string), shortened.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 64;
  return std::string(text.substr(0, kMax)) + (text.size() > kMax ? "..." : "");
}

// The value expressions of one column, one per row (VALUES rows or SET).
// Empty with `found` false when the column is not written.
struct ColumnValues {
  bool found = false;
  std::vector<const parser::Expr*> values;
};

ColumnValues valuesOf(const parser::InsertStatement& ins, std::string_view column) {
  ColumnValues out;
  if (!ins.set.empty()) {
    for (const auto& a : ins.set) {
      if (equalsIgnoreCase(a.column.column.value, column)) {
        out.found = true;
        out.values.push_back(a.value.get());
      }
    }
    return out;
  }
  for (size_t i = 0; i < ins.columns.size(); ++i) {
    if (!equalsIgnoreCase(ins.columns[i].value, column)) continue;
    out.found = true;
    for (const auto& row : ins.rows) out.values.push_back(i < row.size() ? row[i].get() : nullptr);
    break;
  }
  return out;
}

std::optional<Plan> keyError(const RoutingContext& ctx, const parser::Expr* e, const KeyValue& v) {
  const TableRule& rule = *ctx.rule;
  std::string verb(verbOf(ctx.statement.kind));
  std::string text = e ? quoted(e->range.text(ctx.sql)) : "nothing";
  switch (v.status) {
    case ValueStatus::kValue: return std::nullopt;
    case ValueStatus::kNegative:
      return refuse(RouteErrorCode::kNegativeKey,
                    "shardproxy: " + verb + " into sharded table " + rule.name + " with negative " + rule.key + " " +
                        text + ": use the canonical (positive) id; a Bot API chat id -100XXXXXXXXXX is channel id "
                        "XXXXXXXXXX");
    case ValueStatus::kNull:
      return refuse(RouteErrorCode::kInsertWithoutKey, "shardproxy: " + verb + " into sharded table " + rule.name +
                                                           " with NULL " + rule.key + ": every row needs a " +
                                                           rule.key + " value");
    case ValueStatus::kNeedsParam:
      return refuse(RouteErrorCode::kInsertWithoutKey, "shardproxy: " + verb + " into sharded table " + rule.name +
                                                           ": the " + rule.key +
                                                           " value is a ? parameter without a bound value");
    default:
      return refuse(RouteErrorCode::kBadKeyValue,
                    "shardproxy: " + verb + " into sharded table " + rule.name + " with " + rule.key + " " + text +
                        ", which is not an exact unsigned 64-bit integer: write the key as an integer literal");
  }
}

// Month tables: each row's month column is the first day of its time column's month.
// `rows_months` gets the months of rows whose month value is a literal (the
// proxy refuses writes into archived months with it).
std::optional<Plan> checkMonths(const RoutingContext& ctx, const parser::InsertStatement& ins,
                                MonthRange& rows_months) {
  const MonthRule& m = *ctx.rule->month;
  std::string verb(verbOf(ctx.statement.kind));
  ColumnValues months = valuesOf(ins, m.column);
  if (!months.found) {
    return refuse(RouteErrorCode::kMissingMonthBound, "shardproxy: " + verb + " into sharded table " +
                                                          ctx.rule->name + " must set " + m.column +
                                                          " (the first day of the row's " +
                                                          (m.time_column.empty() ? "month" : m.time_column + " month") + ")");
  }
  ColumnValues times = m.time_column.empty() ? ColumnValues{} : valuesOf(ins, m.time_column);
  for (size_t i = 0; i < months.values.size(); ++i) {
    if (!months.values[i]) continue;
    DateBound month = dateValueOf(*months.values[i], ctx.sql, ctx.input.params);
    if (month.status == ValueStatus::kInexact) {
      return refuse(RouteErrorCode::kBadMonthValue, "shardproxy: " + m.column + " value " +
                                                        quoted(months.values[i]->range.text(ctx.sql)) +
                                                        " is not a 'YYYY-MM-DD' date literal");
    }
    if (month.status != ValueStatus::kValue) continue;  // an expression: MySQL checks the column itself
    MonthIndex row_month = monthIndexOf(month.value.date);
    if (!rows_months.lo || row_month < *rows_months.lo) rows_months.lo = row_month;
    if (!rows_months.hi || row_month > *rows_months.hi) rows_months.hi = row_month;
    if (!isMonthStart(month.value)) {
      return refuse(RouteErrorCode::kMonthMismatch, "shardproxy: " + m.column + " value " +
                                                        quoted(months.values[i]->range.text(ctx.sql)) +
                                                        " is not the first day of a month");
    }
    if (i >= times.values.size() || !times.values[i]) continue;
    DateBound time = dateValueOf(*times.values[i], ctx.sql, ctx.input.params);
    if (time.status == ValueStatus::kValue && monthIndexOf(time.value.date) != monthIndexOf(month.value.date)) {
      return refuse(RouteErrorCode::kMonthMismatch,
                    "shardproxy: row " + std::to_string(i + 1) + " has " + m.column + " " +
                        quoted(months.values[i]->range.text(ctx.sql)) + " but " + m.time_column + " " +
                        quoted(times.values[i]->range.text(ctx.sql)) + ": " + m.column + " must be " +
                        formatMonthStart(monthIndexOf(time.value.date)) + ", the first day of " + m.time_column +
                        "'s month (UTC)");
    }
  }
  return std::nullopt;
}

std::optional<Plan> checkOnDuplicate(const RoutingContext& ctx, const parser::InsertStatement& ins) {
  for (const auto& a : ins.on_duplicate) {
    std::string_view col = a.column.column.value;
    bool month_col = ctx.rule->month && (equalsIgnoreCase(col, ctx.rule->month->column) ||
                                         equalsIgnoreCase(col, ctx.rule->month->time_column));
    if (equalsIgnoreCase(col, ctx.rule->key) || month_col) {
      return refuse(RouteErrorCode::kShardKeyUpdate,
                    "shardproxy: ON DUPLICATE KEY UPDATE on sharded table " + ctx.rule->name + " sets " +
                        std::string(col) + ", which decides where the row lives");
    }
  }
  return std::nullopt;
}

// One target per shard, each receiving the statement with only its own rows
// in the VALUES list (everything else -- column list, IGNORE, row alias,
// ON DUPLICATE KEY UPDATE, comments -- kept byte for byte). Targets follow the
// order of each shard's first row, so the first target holds the first row.
Plan splitRows(const RoutingContext& ctx, const parser::InsertStatement& ins, const std::vector<uint32_t>& row_shards) {
  if (ins.row_ranges.size() != ins.rows.size() || ins.rows.size() != row_shards.size()) {
    return refuse(RouteErrorCode::kInsertMultiShard, "shardproxy: " + std::string(verbOf(ctx.statement.kind)) +
                                                         " into sharded table " + ctx.rule->name +
                                                         " spans shards and its rows cannot be split");
  }
  std::vector<uint32_t> order;
  for (uint32_t s : row_shards) {
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  }
  Plan result;
  result.kind = PlanKind::kMultiWrite;
  result.table = ctx.rule;
  for (uint32_t shard : order) {
    std::string kept;
    for (size_t i = 0; i < row_shards.size(); ++i) {
      if (row_shards[i] != shard) continue;
      if (!kept.empty()) kept += ", ";
      kept += ins.row_ranges[i].text(ctx.sql);
    }
    std::vector<TextEdit> edits{{ins.row_ranges.front().begin, ins.row_ranges.back().end, std::move(kept)}};
    Plan one = routeToShard(ctx, shard, std::move(edits));
    if (one.kind != PlanKind::kRoute) return one;
    result.targets.push_back(std::move(one.targets.front()));
  }
  return result;
}

}  // namespace

Plan planInsert(const RoutingContext& ctx) {
  const parser::InsertStatement& ins = *ctx.statement.insert;
  const TableRule& rule = *ctx.rule;
  std::string verb(verbOf(ctx.statement.kind));
  if (ins.select) {
    return refuse(RouteErrorCode::kUnsupported, "shardproxy: " + verb + " ... SELECT into sharded table " +
                                                    rule.name + " is not supported: insert the rows with VALUES");
  }
  ColumnValues keys = valuesOf(ins, rule.key);
  if (!keys.found) {
    return refuse(RouteErrorCode::kInsertWithoutKey,
                  "shardproxy: " + verb + " into sharded table " + rule.name + " needs the column " + rule.key +
                      (ins.columns.empty() && ins.set.empty() ? " in an explicit column list" : " in its column list"));
  }
  std::vector<uint64_t> values;
  std::vector<uint32_t> shards;
  Plan info;
  for (const parser::Expr* e : keys.values) {
    KeyValue v = e ? storedKeyValueOf(*e, ctx.sql, ctx.input.params) : KeyValue{ValueStatus::kNotLiteral, 0};
    if (e && e->kind == parser::ExprKind::kLiteral && e->literal_kind == parser::LiteralKind::kPlaceholder) {
      info.depends_on_params = true;
    }
    if (auto error = keyError(ctx, e, v)) return *error;
    values.push_back(v.value);
    shards.push_back(rule.shardIndexOf(v.value));
  }
  if (shards.empty()) {
    return refuse(RouteErrorCode::kInsertWithoutKey, "shardproxy: " + verb + " into sharded table " + rule.name +
                                                         " has no rows with a " + rule.key + " value");
  }
  std::vector<uint32_t> distinct = shards;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const bool split = ctx.input.multi_shard_writes == MultiShardWrites::kBestEffort;
  if (distinct.size() > 1 && !split) {
    std::string names;
    for (uint32_t s : distinct) names += (names.empty() ? "" : ", ") + rule.shards[s].name;
    return refuse(RouteErrorCode::kInsertMultiShard,
                  "shardproxy: " + verb + " into sharded table " + rule.name + " has rows for shards " + names +
                      ": send one statement per shard (or allow non-atomic split writes with "
                      "scatter.multi_shard_writes: best_effort)");
  }
  if (auto error = checkOnDuplicate(ctx, ins)) return *error;
  MonthRange rows_months;
  if (rule.month) {
    if (auto error = checkMonths(ctx, ins, rows_months)) return *error;
  }
  Plan plan = distinct.size() > 1 ? splitRows(ctx, ins, shards) : routeToShard(ctx, distinct.front(), {});
  if (plan.kind != PlanKind::kRoute && plan.kind != PlanKind::kMultiWrite) return plan;
  if (rows_months.isBounded()) plan.months = rows_months;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  plan.key_values = std::move(values);
  plan.depends_on_params = info.depends_on_params;
  return plan;
}

}  // namespace sp::routing::detail
