#include "routing/prepare_target.hpp"

#include "parser/lexer.hpp"
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

Plan planForPrepare(std::string_view sql, const PlannerInput& input, std::string_view preferred_backend) {
  auto parsed = parser::parse(sql, input.limits);
  // Statements the parser does not model (or cannot parse) are judged the
  // same way as for a plain query: refused when they name a sharded table.
  if (!parsed || (!parsed->select && !parsed->insert && !parsed->update && !parsed->del)) {
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
  const Shard* representative = &rule->shards.front();
  for (const Shard& candidate : rule->shards) {
    if (!preferred_backend.empty() && candidate.backend == preferred_backend) {
      representative = &candidate;
      break;
    }
  }
  const Shard& shard = *representative;
  std::vector<TextEdit> edits;
  renameTable(refs, rule->name, shard.physical_table, edits);
  Plan plan;
  plan.kind = PlanKind::kRoute;
  plan.table = rule;
  plan.targets.push_back(RouteTarget{shard.backend, shard.name, shard.physical_table, applyEdits(sql, std::move(edits))});
  return plan;
}

std::optional<Refusal> checkSqlPrepare(std::string_view sql, const CompiledShardMap& map) {
  // PREPARE name FROM <string>: find the string literal after FROM.
  auto tokens = parser::tokenize(sql);
  std::string text;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].isKeyword(parser::Keyword::kFROM) && tokens[i + 1].is(parser::TokenKind::kString)) {
      text = parser::unquoteString(tokens[i + 1].text(sql));
      break;
    }
  }
  if (text.empty()) return std::nullopt;
  for (const auto& t : parser::tokenize(text)) {
    if (!t.is(parser::TokenKind::kIdentifier) && !t.is(parser::TokenKind::kQuotedIdentifier)) continue;
    std::string name = t.is(parser::TokenKind::kQuotedIdentifier) ? parser::unquoteIdentifier(t.text(text))
                                                                   : std::string(t.text(text));
    const TableRule* rule = map.findTable(name);
    if (!rule) {
      if (auto physical = map.findPhysical(name)) rule = physical->table;
    }
    if (rule) {
      return Refusal{RouteErrorCode::kUnsupported,
                     "shardproxy: PREPARE ... FROM names sharded table " + rule->name +
                         "; SQL-level prepared statements cannot be routed (their EXECUTE values live in user "
                         "variables on the backend): use the binary protocol (server-side prepare in the driver) "
                         "or send the statement with its values"};
    }
  }
  return std::nullopt;
}

}  // namespace sp::routing
