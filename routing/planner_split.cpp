// SELECT with `key IN (...)` values on several shards, when the caller can
// merge results (PlannerInput::split_in_lists): one target per shard, each
// receiving the statement with only its own values in the key IN lists, so
// no shard is asked for keys it does not hold.
#include "routing/planner_detail.hpp"

namespace sp::routing::detail {
namespace {

// Edits cutting each key IN list down to the elements whose value lives on `shard`.
std::optional<Plan> cutInLists(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                               uint32_t shard, std::vector<TextEdit>& edits) {
  for (const parser::Expr* in : in_lists) {
    std::string kept;
    for (size_t i = 1; i < in->args.size(); ++i) {
      const parser::Expr& element = *in->args[i];
      if (element.kind == parser::ExprKind::kLiteral && element.literal_kind == parser::LiteralKind::kPlaceholder) {
        return refuse(RouteErrorCode::kMultiShard,
                      "shardproxy: SELECT on sharded table " + ctx.rule->name + ": an IN list with ? parameters on " +
                          ctx.rule->key + " spans several shards; send one statement per shard");
      }
      KeyValue v = keyValueOf(element, ctx.sql, ctx.input.params);
      if (v.status != ValueStatus::kValue || ctx.rule->shardIndexOf(v.value) != shard) continue;
      if (!kept.empty()) kept += ", ";
      kept += element.range.text(ctx.sql);
    }
    // Every shard planned holds a value of the intersection, which every list contains.
    edits.push_back({in->args[1]->range.begin, in->args.back()->range.end, std::move(kept)});
  }
  return std::nullopt;
}

}  // namespace

std::optional<Plan> shardEdits(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                               uint32_t shard, const parser::Expr* where, Plan& result, std::vector<TextEdit>& edits) {
  if (auto refusal = cutInLists(ctx, in_lists, shard, edits)) return refusal;
  if (!ctx.rule->month) return std::nullopt;
  Plan info;
  if (auto refusal = applyMonthRule(ctx, where, ctx.rule->shards[shard].physical_table, info, edits)) return refusal;
  result.months = info.months;
  result.depends_on_params |= info.depends_on_params;
  return std::nullopt;
}

Plan splitInLists(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                  const std::vector<uint32_t>& shards, const parser::Expr* where) {
  Plan result;
  result.kind = PlanKind::kMultiRoute;
  result.table = ctx.rule;
  for (uint32_t shard : shards) {
    std::vector<TextEdit> edits;
    if (auto refusal = shardEdits(ctx, in_lists, shard, where, result, edits)) return *refusal;
    Plan one = routeToShard(ctx, shard, std::move(edits));
    if (one.kind != PlanKind::kRoute) return one;
    result.targets.push_back(std::move(one.targets.front()));
  }
  return result;
}

}  // namespace sp::routing::detail
