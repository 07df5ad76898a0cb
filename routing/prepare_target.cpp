#include "routing/prepare_target.hpp"

#include <optional>
#include <string>

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
  auto parsed = parser::parse(sql, input.limits, input.dialect);
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
    // Another schema's table of that name (or another letter case): the
    // usual rules pass it through, or refuse a statement naming both.
    if (!resolvesTo(*use.name, t->name, input.names)) return planQuery(sql, input);
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

namespace {

// The sharded table a statement text names (logical or physical), if any.
const TableRule* shardedTableNamed(std::string_view text, const CompiledShardMap& map,
                                   const parser::Dialect& dialect) {
  for (const auto& t : parser::tokenize(text, dialect)) {
    if (!t.is(parser::TokenKind::kIdentifier) && !t.is(parser::TokenKind::kQuotedIdentifier)) continue;
    std::string name = t.is(parser::TokenKind::kQuotedIdentifier) ? parser::unquoteIdentifier(t.text(text))
                                                                   : std::string(t.text(text));
    if (const TableRule* rule = map.findTable(name)) return rule;
    if (auto physical = map.findPhysical(name)) return physical->table;
  }
  return nullptr;
}

// `text` as a string literal that reads back the same under any sql_mode;
// nullopt when it holds a backslash (read differently with and without
// NO_BACKSLASH_ESCAPES).
std::optional<std::string> quoteForAnyMode(std::string_view text) {
  if (text.find('\\') != std::string_view::npos) return std::nullopt;
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

}  // namespace

namespace {

// PREPARE name FROM <string>: the string literal after FROM.
const parser::Token* prepareLiteral(const std::vector<parser::Token>& tokens) {
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].isKeyword(parser::Keyword::kFROM) && tokens[i + 1].is(parser::TokenKind::kString)) {
      return &tokens[i + 1];
    }
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> sqlPrepareText(std::string_view sql, const parser::Dialect& dialect) {
  auto tokens = parser::tokenize(sql, dialect);
  const parser::Token* literal = prepareLiteral(tokens);
  if (!literal) return std::nullopt;
  return parser::unquoteString(literal->text(sql), dialect);
}

std::optional<std::string> sqlPrepareVariable(std::string_view sql, const parser::Dialect& dialect) {
  auto tokens = parser::tokenize(sql, dialect);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].isKeyword(parser::Keyword::kFROM) && tokens[i + 1].is(parser::TokenKind::kUserVariable)) {
      return std::string(tokens[i + 1].text(sql));
    }
  }
  return std::nullopt;
}

Plan planSqlPrepare(std::string_view sql, const PlannerInput& input) {
  Plan passthrough;
  passthrough.kind = PlanKind::kPassthrough;
  auto tokens = parser::tokenize(sql, input.dialect);
  const parser::Token* literal = prepareLiteral(tokens);
  // FROM @var: the text is only known to the backend (default backend, as any unsharded statement).
  if (!literal) return passthrough;
  const std::string text = parser::unquoteString(literal->text(sql), input.dialect);
  const TableRule* rule = shardedTableNamed(text, input.map, input.dialect);
  if (!rule) return passthrough;
  const std::string prefix = "shardproxy: PREPARE ... FROM names sharded table " + rule->name + ": ";
  Plan inner = planQuery(text, input);
  // The name was only spelled (a column, a variable, an alias): nothing to route.
  if (inner.kind == PlanKind::kPassthrough) return passthrough;
  if (inner.kind == PlanKind::kRoute && inner.targets.size() == 1) {
    auto quoted = quoteForAnyMode(inner.targets.front().sql);
    if (!quoted) {
      return refused(RouteErrorCode::kUnsupported,
                     prefix + "a statement text with a backslash cannot be rewritten the same way under every "
                              "sql_mode; use the binary protocol (server-side prepare in the driver)");
    }
    Plan plan = std::move(inner);
    std::string& physical = plan.targets.front().sql;
    physical = std::string(sql.substr(0, literal->begin)) + *quoted + std::string(sql.substr(literal->end));
    return plan;
  }
  if (inner.kind == PlanKind::kRefused && inner.refusal && text.find('?') != std::string::npos &&
      (inner.refusal->code == RouteErrorCode::kMissingKey || inner.refusal->code == RouteErrorCode::kBadKeyValue)) {
    return refused(RouteErrorCode::kMissingKey,
                   prefix + "its shard key is a ? bound by EXECUTE ... USING @variables, whose values the proxy "
                            "never sees; write the key value into the prepared text, or use the binary protocol "
                            "(server-side prepare in the driver)");
  }
  if (inner.kind == PlanKind::kRefused && inner.refusal) {
    Plan plan = std::move(inner);
    plan.refusal->message = prefix + plan.refusal->message;
    return plan;
  }
  return refused(RouteErrorCode::kMultiShard,
                 prefix + "the statement spans several shards, and a SQL-level prepared statement runs on one "
                          "backend connection; name one shard key value, or use the binary protocol");
}

}  // namespace sp::routing
