// Internal to the planner (planner.cpp, planner_insert.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "routing/ast_refs.hpp"
#include "routing/conditions.hpp"
#include "routing/plan.hpp"
#include "routing/rewrite.hpp"

namespace sp::routing::detail {

// One statement being planned against one sharded table.
struct RoutingContext {
  const parser::Statement& statement;
  std::string_view sql;
  const PlannerInput& input;
  const StatementRefs& refs;  // the statement's, or the plan cache entry's (computed once per shape)
  const TableRule* rule = nullptr;           // the sharded table
  const TableUse* use = nullptr;             // its (single) reference
  std::vector<const TableUse*> unsharded;    // other tables: live on default_backend
  std::vector<PhysicalTableRef> physical;    // directly named physical tables
  std::vector<TextEdit>* edits_out = nullptr;  // when set, receives the edits behind the routed SQL
};

Plan refuse(RouteErrorCode code, std::string message);
std::string_view verbOf(parser::StatementKind kind);
// "conv_id = <value> or conv_id IN (...)"
std::string keyHint(const TableRule& rule);

// Checks co-location with the other tables, renames the logical table to the
// shard's physical table, applies `edits` and builds the single-target plan.
// `key`: the one shard-key value the WHERE pins, when it pins exactly one
// (hot-then-cold reads skip the archive with it, routing/archive_read.hpp).
Plan routeToShard(const RoutingContext& ctx, uint32_t shard_index, std::vector<TextEdit> edits,
                  std::optional<uint64_t> key = std::nullopt);

Plan planInsert(const RoutingContext& ctx);

// Month tables: checks the bounds of `where` and adds the month predicate
// edit (qualified for `physical`); a refusal when the bounds do not allow it.
std::optional<Plan> applyMonthRule(const RoutingContext& ctx, const parser::Expr* where, std::string_view physical,
                                   Plan& info, std::vector<TextEdit>& edits);

// One target per shard, each IN list on the key cut down to that shard's values.
Plan splitInLists(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                  const std::vector<uint32_t>& shards, const parser::Expr* where);

// All edits that give `shard` its own statement: its values in the key IN
// lists and, for month tables, the month rule on its physical table (the
// months and parameter dependence are recorded in `result`).
std::optional<Plan> shardEdits(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                               uint32_t shard, const parser::Expr* where, Plan& result, std::vector<TextEdit>& edits);

// A SELECT spread over `shards` (routing/scatter.cpp): a kScatter plan with
// each shard's SQL and the merge, or a refusal. `keyless`: the WHERE pins no
// key (the table's scatter policy decides); `in_lists`: the key IN lists to
// cut per shard (none when the key values came from `=` / OR disjuncts).
Plan planScatter(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                 const std::vector<uint32_t>& shards, const parser::Expr* where, bool keyless);

// planStatement, also handing out the edits that turned `sql` into the routed
// SQL (empty when the SQL is unchanged); the plan cache re-applies them to the
// original text of a normalized query. `refs`: collectRefs(statement) when
// the caller keeps them (the plan cache, per shape), else computed here.
Plan planStatementWithEdits(const parser::Statement& statement, std::string_view sql, const PlannerInput& input,
                            std::vector<TextEdit>* edits_out, const StatementRefs* refs = nullptr);

}  // namespace sp::routing::detail
