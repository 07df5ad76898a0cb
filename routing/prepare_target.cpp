#include "routing/prepare_target.hpp"

#include "parser/parse.hpp"
#include "routing/ast_refs.hpp"
#include "routing/rewrite.hpp"

namespace sp::routing {

namespace {

Plan refused(RouteErrorCode code, std::string message) {
  Plan p;
  p.kind = PlanKind::kRefused;
  p.refusal = Refusal{code, std::move(message)};
  return p;
}

}  // namespace

Plan planForPrepare(std::string_view sql, const PlannerInput& input) {
  auto parsed = parser::parse(sql);
  // Statements the parser does not model (or cannot parse) are judged the
  // same way as for a plain query: refused when they name a sharded table.
  if (!parsed || !parsed->select && !parsed->insert && !parsed->update && !parsed->del) {
    return planQuery(sql, input);
  }
  StatementRefs refs = collectRefs(*parsed);
  const TableRule* rule = nullptr;
  for (const auto& use : refs.tables) {
    const TableRule* t = input.map.findTable(use.name->table.value);
    if (!t) continue;
    if (rule && t != rule) {
      return refused(RouteErrorCode::kCrossShardJoin,
                     "shardproxy: prepared statement names two sharded tables (" + rule->name + ", " + t->name +
                         "); a statement must stay on one shard");
    }
    rule = t;
  }
  if (!rule) return planQuery(sql, input);  // unsharded or physical tables: the usual rules
  const Shard& shard = rule->shards.front();
  std::vector<TextEdit> edits;
  renameTable(refs, rule->name, shard.physical_table, edits);
  Plan plan;
  plan.kind = PlanKind::kRoute;
  plan.table = rule;
  plan.targets.push_back(RouteTarget{shard.backend, shard.name, shard.physical_table, applyEdits(sql, std::move(edits))});
  return plan;
}

}  // namespace sp::routing
