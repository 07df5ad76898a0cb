// Single-shard planning of SELECT / UPDATE / DELETE and the dispatch shared
// with INSERT (planner_insert.cpp). Rules and error codes: docs/routing.md.
#include <algorithm>

#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "parser/table_positions.hpp"
#include "parser/set_statement.hpp"
#include "routing/conditions.hpp"
#include "routing/archive_read.hpp"
#include "routing/planner_detail.hpp"

namespace sp::routing {
namespace detail {

Plan refuse(RouteErrorCode code, std::string message) {
  Plan plan;
  plan.kind = PlanKind::kRefused;
  plan.refusal = Refusal{code, std::move(message)};
  return plan;
}

std::string_view verbOf(parser::StatementKind kind) {
  switch (kind) {
    case parser::StatementKind::kSelect: return "SELECT";
    case parser::StatementKind::kInsert: return "INSERT";
    case parser::StatementKind::kReplace: return "REPLACE";
    case parser::StatementKind::kUpdate: return "UPDATE";
    case parser::StatementKind::kDelete: return "DELETE";
    default: return "statement";
  }
}

std::string keyHint(const TableRule& rule) {
  return rule.key + " = <value> or " + rule.key + " IN (...)";
}

Plan routeToShard(const RoutingContext& ctx, uint32_t shard_index, std::vector<TextEdit> edits,
                  std::optional<uint64_t> key) {
  const Shard& shard = ctx.rule->shards[shard_index];
  for (const TableUse* other : ctx.unsharded) {
    if (ctx.input.default_backend != shard.backend) {
      return refuse(RouteErrorCode::kCrossShardJoin,
                    "shardproxy: " + std::string(verbOf(ctx.statement.kind)) + " joins sharded table " +
                        ctx.rule->name + " (shard " + shard.name + " on backend " + shard.backend +
                        ") with unsharded table " + std::string(other->name->table.value) + " on backend " +
                        std::string(ctx.input.default_backend) +
                        ": a join must stay on one backend; query the tables separately");
    }
  }
  for (const auto& p : ctx.physical) {
    if (p.shard->backend != shard.backend) {
      return refuse(RouteErrorCode::kCrossShardJoin,
                    "shardproxy: statement combines " + ctx.rule->name + " shard " + shard.name + " (backend " +
                        shard.backend + ") with " + p.shard->physical_table + " (backend " + p.shard->backend +
                        "): a statement must stay on one backend");
    }
  }
  renameTable(ctx.refs, ctx.use->name->table.value, shard.physical_table, edits);
  bool copies_text = false;
  if (ctx.statement.kind == parser::StatementKind::kSelect) {  // tables with `archive:`
    copies_text = readHotAndCold(ctx.sql, ctx.statement, ctx.refs, *ctx.rule, shard, key, ctx.input.params, edits);
  }
  if (ctx.edits_out) *ctx.edits_out = edits;
  Plan plan;
  plan.kind = PlanKind::kRoute;
  plan.copies_text = copies_text;
  plan.table = ctx.rule;
  plan.targets.push_back({shard.backend, shard.name, shard.physical_table, applyEdits(ctx.sql, std::move(edits))});
  return plan;
}

}  // namespace detail

namespace {

using namespace detail;

ColumnMatcher matcherFor(const RoutingContext& ctx, std::string_view column) {
  bool aliased = ctx.use->alias && !ctx.use->alias->empty();
  return {column, aliased ? ctx.use->alias->value : ctx.use->name->table.value};
}

const parser::Expr* whereOf(const parser::Statement& st) {
  if (st.select) return st.select->where.get();
  if (st.update) return st.update->where.get();
  if (st.del) return st.del->where.get();
  return nullptr;
}

// UPDATE may not move rows: the key and month columns decide where a row lives.
std::optional<Plan> checkUpdateSet(const RoutingContext& ctx) {
  const auto& st = ctx.statement;
  for (const auto& a : st.update->set) {
    std::string_view col = a.column.column.value;
    bool month_col = ctx.rule->month && (equalsIgnoreCase(col, ctx.rule->month->column) ||
                                         equalsIgnoreCase(col, ctx.rule->month->time_column));
    if (equalsIgnoreCase(col, ctx.rule->key) || month_col) {
      return refuse(RouteErrorCode::kShardKeyUpdate,
                    "shardproxy: UPDATE on sharded table " + ctx.rule->name + " sets " + std::string(col) +
                        ", which decides where the row lives: delete the row and insert it again instead");
    }
  }
  return std::nullopt;
}

// How the added month predicate names the month column: through the alias,
// through the physical name when other tables are in the statement, else bare.
std::string monthColumnRef(const RoutingContext& ctx, std::string_view physical) {
  const std::string& column = ctx.rule->month->column;
  if (ctx.use->alias && !ctx.use->alias->empty()) return std::string(ctx.use->alias->range.text(ctx.sql)) + "." + column;
  if (ctx.refs.tables.size() > 1) return std::string(physical) + "." + column;
  return column;
}

}  // namespace

// Month tables: both bounds required, span limited; adds the month-column
// predicate when the month column alone does not bound both sides.
std::optional<Plan> detail::applyMonthRule(const RoutingContext& ctx, const parser::Expr* where,
                                           std::string_view physical, Plan& info, std::vector<TextEdit>& edits) {
  const MonthRule& rule = *ctx.rule->month;
  MonthConstraint months = extractMonths(where, ctx.sql, matcherFor(ctx, rule.column),
                                         matcherFor(ctx, rule.time_column), ctx.input.params);
  info.depends_on_params |= months.depends_on_params;
  if (months.refusal) return refuse(months.refusal->code, months.refusal->message);
  const MonthRange& r = months.combined;
  std::string verb(verbOf(ctx.statement.kind));
  std::string what = rule.column + (rule.time_column.empty() ? "" : " or " + rule.time_column);
  if (!r.lo || !r.hi) {
    std::string missing = !r.lo && !r.hi ? "a lower and an upper bound" : !r.lo ? "a lower bound" : "an upper bound";
    return refuse(RouteErrorCode::kMissingMonthBound,
                  "shardproxy: " + verb + " on sharded table " + ctx.rule->name + " needs " + missing + " on " +
                      what + " in the WHERE clause (e.g. " + rule.column + " >= '2025-01-01' AND " + rule.column +
                      " < '2025-04-01'), spanning at most " + std::to_string(rule.max_span_months) + " months");
  }
  if (!r.isEmpty() && *r.span() > rule.max_span_months) {
    return refuse(RouteErrorCode::kMonthSpanTooLong,
                  "shardproxy: " + verb + " on sharded table " + ctx.rule->name + " spans " +
                      std::to_string(*r.span()) + " months (" + formatMonthStart(*r.lo) + " to " +
                      formatMonthStart(*r.hi) + "), more than max_span_months = " +
                      std::to_string(rule.max_span_months) + ": split the query by month range");
  }
  info.months = r;
  bool month_bounded = months.from_month_column.lo && months.from_month_column.hi;
  if (!month_bounded && !r.isEmpty() && where) {
    bool needs_parens = !(where->kind == parser::ExprKind::kBinary && where->binary_op == parser::BinaryOp::kAnd);
    std::string predicate = monthPredicate(monthColumnRef(ctx, physical), r);
    if (needs_parens) edits.push_back({where->range.begin, where->range.begin, "("});
    edits.push_back({where->range.end, where->range.end, (needs_parens ? ") AND " : " AND ") + predicate});
  }
  return std::nullopt;
}

namespace {

// LOAD DATA | XML ...: a file's rows, which the planner cannot route by key.
bool startsWithLoadData(std::string_view sql, const parser::Dialect& dialect) {
  const std::vector<parser::Token> tokens = parser::tokenize(sql, dialect);
  auto word = [&](size_t i, std::string_view w) {
    if (i >= tokens.size()) return false;
    std::string_view text = tokens[i].text(sql);
    return text.size() == w.size() && std::equal(text.begin(), text.end(), w.begin(), [](char a, char b) {
             return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b;
           });
  };
  return word(0, "load") && (word(1, "data") || word(1, "xml"));
}

Plan refuseLoadData(const std::string& table) {
  return refuse(RouteErrorCode::kUnsupported,
                "shardproxy: LOAD DATA into sharded table " + table +
                    " is not supported: the proxy does not route a file's rows by their shard key; load multi-row "
                    "INSERTs through the proxy, or each physical table directly (users[].physical_tables)");
}

Plan planFiltered(const RoutingContext& ctx) {
  if (ctx.statement.update) {
    if (auto refusal = checkUpdateSet(ctx)) return *refusal;
  }
  const parser::Expr* where = whereOf(ctx.statement);
  std::string verb(verbOf(ctx.statement.kind));
  KeyConstraint key = extractKey(where, ctx.sql, matcherFor(ctx, ctx.rule->key), ctx.rule->name, ctx.input.params);
  if (key.refusal) return refuse(key.refusal->code, key.refusal->message);
  if (key.kind == KeyConstraint::Kind::kNone && ctx.statement.select && ctx.input.allow_scatter &&
      ctx.rule->scatter != ScatterPolicy::kDeny) {
    std::vector<uint32_t> all(ctx.rule->shards.size());
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    Plan plan = planScatter(ctx, {}, all, where, true);
    plan.depends_on_params |= key.depends_on_params;
    return plan;
  }
  if (key.kind == KeyConstraint::Kind::kNone) {
    return refuse(RouteErrorCode::kMissingKey, "shardproxy: " + verb + " on sharded table " + ctx.rule->name +
                                                   " needs " + keyHint(*ctx.rule) + " in the WHERE clause");
  }
  std::vector<uint32_t> shards;
  for (uint64_t v : key.values) shards.push_back(ctx.rule->shardIndexOf(v));
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  if (shards.size() > 1 && ctx.input.allow_scatter && ctx.statement.select) {
    Plan plan = planScatter(ctx, key.in_lists, shards, where, false);
    if (plan.kind == PlanKind::kScatter) plan.key_values = std::move(key.values);
    plan.depends_on_params |= key.depends_on_params;
    return plan;
  }
  if (shards.size() > 1 && ctx.input.split_in_lists && ctx.statement.select) {
    Plan plan = splitInLists(ctx, key.in_lists, shards, where);
    if (plan.kind == PlanKind::kMultiRoute) plan.key_values = std::move(key.values);
    return plan;
  }
  if (shards.size() > 1) {
    std::string names;
    for (uint32_t s : shards) names += (names.empty() ? "" : ", ") + ctx.rule->shards[s].name;
    return refuse(RouteErrorCode::kMultiShard, "shardproxy: " + verb + " on sharded table " + ctx.rule->name +
                                                   ": the " + ctx.rule->key + " values are on shards " + names +
                                                   "; one statement must stay on one shard (split the IN list)");
  }
  // No value can match (kEmpty): the SQL itself is contradictory, so any shard
  // answers "no rows"; take the first value's shard (a transaction is likely
  // already there), shard 0 when there is none (conv_id = NULL).
  uint32_t shard = !shards.empty() ? shards[0] : key.first_seen ? ctx.rule->shardIndexOf(*key.first_seen) : 0;
  Plan info;
  info.depends_on_params = key.depends_on_params;
  std::vector<TextEdit> edits;
  if (ctx.rule->month) {
    if (auto refusal = applyMonthRule(ctx, where, ctx.rule->shards[shard].physical_table, info, edits)) {
      return *refusal;
    }
  }
  std::optional<uint64_t> one_key;
  if (key.kind == KeyConstraint::Kind::kValues && key.values.size() == 1) one_key = key.values[0];
  Plan plan = routeToShard(ctx, shard, std::move(edits), one_key);
  if (plan.kind != PlanKind::kRoute) return plan;
  plan.key_values = std::move(key.values);
  plan.months = info.months;
  plan.depends_on_params = info.depends_on_params;
  plan.provably_empty = key.kind == KeyConstraint::Kind::kEmpty;
  return plan;
}

}  // namespace
}  // namespace sp::routing

namespace sp::routing {
namespace {

using namespace detail;

Plan passthrough(std::string_view sql, std::string_view backend) {
  Plan plan;
  plan.kind = PlanKind::kPassthrough;
  plan.targets.push_back({std::string(backend), "", "", std::string(sql)});
  return plan;
}

// A sharded table (logical or physical) named in a table position of a
// statement without a routed form; a column, variable or alias that merely
// spells its name does not count (parser/table_positions.hpp).
std::optional<std::string> shardedNameIn(std::string_view sql, const CompiledShardMap& map,
                                         const parser::Dialect& dialect) {
  for (auto& name : parser::tableNamePositions(sql, dialect)) {
    if (map.findTable(name) || map.findPhysical(name)) return std::move(name);
  }
  return std::nullopt;
}

// Only directly named physical tables (msg_07) and unsharded tables.
Plan planPhysical(const RoutingContext& ctx) {
  const PhysicalTableRef& first = ctx.physical.front();
  const std::string& backend = first.shard->backend;
  for (const auto& p : ctx.physical) {
    if (p.shard->backend != backend) {
      return refuse(RouteErrorCode::kCrossBackend, "shardproxy: statement names " + first.shard->physical_table +
                                                       " (backend " + backend + ") and " + p.shard->physical_table +
                                                       " (backend " + p.shard->backend +
                                                       "): a statement must stay on one backend");
    }
  }
  if (!ctx.unsharded.empty() && ctx.input.default_backend != backend) {
    return refuse(RouteErrorCode::kCrossBackend,
                  "shardproxy: statement names " + first.shard->physical_table + " (backend " + backend +
                      ") and unsharded table " + std::string(ctx.unsharded.front()->name->table.value) +
                      " (backend " + std::string(ctx.input.default_backend) + "): a statement must stay on one backend");
  }
  Plan plan;
  plan.kind = PlanKind::kRoute;
  plan.table = first.table;
  plan.targets.push_back({backend, first.shard->name, first.shard->physical_table, std::string(ctx.sql)});
  return plan;
}

}  // namespace

Plan planStatement(const parser::Statement& st, std::string_view sql, const PlannerInput& input) {
  return detail::planStatementWithEdits(st, sql, input, nullptr);
}

namespace {

// A SELECT naming a sharded table in a subquery, derived table or UNION branch
// (possibly besides its own FROM): routable when every reference is the same
// logical table and each one's own query block pins the key to values of one
// and the same shard (`... WHERE conv_id = 5 AND seq = (SELECT MAX(seq) FROM
// msg WHERE conv_id = 5)`), or equates its key with a pinned use's key (the
// correlated `m2.conv_id = msg.conv_id`): the whole statement then runs
// there, every name renamed. Anything else keeps the refusal, naming what is
// missing.
Plan planNestedOnOneShard(RoutingContext& ctx, const std::vector<const TableUse*>& sharded) {
  const parser::Statement& st = ctx.statement;
  std::string verb(verbOf(st.kind));
  const TableRule* rule = ctx.input.map.findTable(sharded.front()->name->table.value);
  auto nestedRefusal = [&](const std::string& why) {
    return refuse(RouteErrorCode::kUnsupported,
                  "shardproxy: " + verb + " uses sharded table " + rule->name +
                      " inside a subquery, derived table or UNION, which is supported only when every use of it "
                      "names " + keyHint(*rule) + " of one shard in its own WHERE, or equates its key with the "
                      "key of a use that does (" + why + ")");
  };
  if (!st.select) return nestedRefusal("not a SELECT");
  for (const TableUse* use : sharded) {
    if (ctx.input.map.findTable(use->name->table.value) != rule) return nestedRefusal("two sharded tables");
  }
  if (rule->month) return nestedRefusal("a table with month partitions");
  std::optional<uint32_t> shard;
  bool depends_on_params = false;
  std::vector<uint64_t> key_values;
  std::vector<ColumnMatcher> matchers;
  std::vector<bool> pinned(sharded.size(), false);
  for (size_t i = 0; i < sharded.size(); ++i) {
    const TableUse* use = sharded[i];
    if (!use->block) return nestedRefusal("a use outside a SELECT's FROM");
    RoutingContext one = ctx;
    one.use = use;
    one.rule = rule;
    matchers.push_back(matcherFor(one, rule->key));
    KeyConstraint key = extractKey(use->block->where.get(), ctx.sql, matchers.back(), rule->name, ctx.input.params);
    if (key.refusal) return refuse(key.refusal->code, key.refusal->message);
    depends_on_params |= key.depends_on_params;
    if (key.kind == KeyConstraint::Kind::kNone || key.values.empty()) continue;  // maybe correlated, below
    pinned[i] = true;
    for (uint64_t v : key.values) {
      uint32_t s = rule->shardIndexOf(v);
      if (shard && *shard != s) return nestedRefusal("uses on different shards");
      shard = s;
      key_values.push_back(v);
    }
  }
  // A correlated use, `m2.conv_id = msg.conv_id` with msg pinned: same key
  // values, so the same shard. Repeated so that chains of them resolve.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < sharded.size(); ++i) {
      if (pinned[i]) continue;
      forEachConjunct(sharded[i]->block->where.get(), [&](const parser::Expr& c) {
        if (pinned[i] || c.kind != parser::ExprKind::kBinary || c.binary_op != parser::BinaryOp::kEq ||
            c.args.size() != 2 || c.args[0]->kind != parser::ExprKind::kColumn ||
            c.args[1]->kind != parser::ExprKind::kColumn) {
          return;
        }
        for (int side = 0; side < 2 && !pinned[i]; ++side) {
          const parser::ColumnRef& mine = c.args[side]->column;
          const parser::ColumnRef& outer = c.args[1 - side]->column;
          // The outer side must name another use explicitly (unqualified, it would mean this block's table).
          if (!matchers[i].matches(mine) || outer.table.empty() ||
              equalsIgnoreCase(outer.table.value, matchers[i].qualifier)) {
            continue;
          }
          for (size_t j = 0; j < sharded.size(); ++j) {
            if (j != i && pinned[j] && matchers[j].matches(outer)) pinned[i] = progress = true;
          }
        }
      });
    }
  }
  if (!shard || std::find(pinned.begin(), pinned.end(), false) != pinned.end()) {
    Plan plan = nestedRefusal("a use without such a key");
    plan.depends_on_params = depends_on_params;
    return plan;
  }
  ctx.rule = rule;
  ctx.use = sharded.front();
  Plan plan = routeToShard(ctx, *shard, {});
  if (plan.kind != PlanKind::kRoute) return plan;
  std::sort(key_values.begin(), key_values.end());
  key_values.erase(std::unique(key_values.begin(), key_values.end()), key_values.end());
  plan.key_values = std::move(key_values);
  plan.depends_on_params = depends_on_params;
  return plan;
}

}  // namespace

Plan detail::planStatementWithEdits(const parser::Statement& st, std::string_view sql, const PlannerInput& input,
                                    std::vector<TextEdit>* edits_out, const StatementRefs* refs) {
  if (!st.select && !st.insert && !st.update && !st.del) {
    if (auto name = shardedNameIn(sql, input.map, input.dialect)) {
      if (startsWithLoadData(sql, input.dialect)) return refuseLoadData(*name);
      return refuse(RouteErrorCode::kUnsupported,
                    "shardproxy: this statement names sharded table " + *name +
                        "; only SELECT, INSERT, REPLACE, UPDATE and DELETE are routed (create or alter the "
                        "physical tables on their backends, e.g. with scripts/schema)");
    }
    return passthrough(sql, input.default_backend);
  }
  std::optional<StatementRefs> own_refs;
  if (!refs) refs = &own_refs.emplace(collectRefs(st));
  RoutingContext ctx{st, sql, input, *refs, nullptr, nullptr, {}, {}, edits_out};
  std::vector<const TableUse*> sharded;
  const TableUse* other_schema = nullptr;  // spelled like a sharded table, but another one on the server
  for (const auto& use : ctx.refs.tables) {
    const TableRule* rule = input.map.findTable(use.name->table.value);
    auto physical = rule ? std::nullopt : input.map.findPhysical(use.name->table.value);
    const std::string_view mapped = rule ? std::string_view(rule->name)
                                         : physical ? std::string_view(physical->shard->physical_table) : "";
    if ((rule || physical) && !resolvesTo(*use.name, mapped, input.names)) {
      other_schema = &use;
      ctx.unsharded.push_back(&use);
    } else if (rule) {
      sharded.push_back(&use);
      if (!ctx.rule) ctx.rule = rule;
    } else if (physical) {
      ctx.physical.push_back(*physical);
    } else {
      ctx.unsharded.push_back(&use);
    }
  }
  if (other_schema && (!sharded.empty() || !ctx.physical.empty())) {
    // The rewrite renames by name: a same-named table of another schema (or
    // another letter case under lower_case_table_names = 0) would be renamed too.
    return refuse(RouteErrorCode::kUnsupported,
                  "shardproxy: statement names sharded table " + std::string(sharded.empty()
                      ? std::string_view(ctx.physical.front().shard->physical_table)
                      : sharded.front()->name->table.value) +
                      " and a table spelled like it that is another one on the server (" +
                      std::string(sql.substr(other_schema->name->range.begin,
                                             other_schema->name->range.end - other_schema->name->range.begin)) +
                      ": another schema or letter case); query them separately");
  }
  if (sharded.empty()) return ctx.physical.empty() ? passthrough(sql, input.default_backend) : planPhysical(ctx);
  std::string verb(verbOf(st.kind));
  bool any_nested = std::any_of(sharded.begin(), sharded.end(), [](const TableUse* u) { return u->nested; });
  if (any_nested) return planNestedOnOneShard(ctx, sharded);
  bool multi_table_write = (st.del && (!st.del->targets.empty() || st.del->from.size() != 1 ||
                                       st.del->from[0]->kind != parser::TableRefKind::kTable)) ||
                           (st.update && (st.update->tables.size() != 1 ||
                                          st.update->tables[0]->kind != parser::TableRefKind::kTable));
  if (multi_table_write) {
    return refuse(RouteErrorCode::kUnsupported,
                  "shardproxy: multi-table " + verb + " on sharded table " + std::string(sharded[0]->name->table.value) +
                      " is not supported: write one " + verb + " per table");
  }
  if (sharded.size() > 1) {
    return refuse(RouteErrorCode::kCrossShardJoin,
                  "shardproxy: " + verb + " joins sharded table " + std::string(sharded[0]->name->table.value) +
                      " with sharded table " + std::string(sharded[1]->name->table.value) +
                      ": rows of different shards cannot be joined; query each table separately");
  }
  ctx.use = sharded.front();
  if (st.insert) return planInsert(ctx);
  return planFiltered(ctx);
}

namespace {

// SET STATEMENT ... FOR <statement>: the statement is planned on its own
// text and its routed form keeps the prefix (the variables then hold on the
// shard for that statement, as on one server).
Plan planSetStatement(std::string_view sql, uint32_t body, const PlannerInput& input) {
  Plan plan = planQuery(sql.substr(body), input);
  const std::string_view prefix = sql.substr(0, body);
  switch (plan.kind) {
    case PlanKind::kRefused:
      return plan;
    case PlanKind::kPassthrough:
    case PlanKind::kRoute:
      for (auto& target : plan.targets) target.sql = std::string(prefix) + target.sql;
      return plan;
    default:
      return refuse(RouteErrorCode::kUnsupported,
                    "shardproxy: SET STATEMENT ... FOR is routed only when its statement stays on one shard; "
                    "set the variables for the session instead");
  }
}

}  // namespace

Plan planQuery(std::string_view sql, const PlannerInput& input) {
  if (!input.dialect.supported()) {
    // sql_mode=ORACLE and the like: another grammar. Unsharded statements
    // pass through untouched; nothing naming a sharded table is guessed at.
    if (auto name = shardedNameIn(sql, input.map, parser::Dialect{})) {
      return refuse(RouteErrorCode::kUnsupported,
                    "shardproxy: statement names sharded table " + *name +
                        " but the session's sql_mode or character set is one the proxy does not read "
                        "(docs/parser.md, \"Dialect\"); use the default sql_mode and a supported charset");
    }
    return passthrough(sql, input.default_backend);
  }
  if (auto body = parser::setStatementBody(sql, input.dialect)) return planSetStatement(sql, *body, input);
  auto parsed = parser::parse(sql, input.limits, input.dialect);
  if (parsed) return planStatement(*parsed, sql, input);
  if (parsed.error().kind == parser::ParseErrorKind::kTooComplex) {
    // Never passed on, even for unsharded tables: the budget protects the
    // proxy's memory and stack, and the same text would be parsed again.
    return refuse(RouteErrorCode::kTooComplex, "shardproxy: " + parsed.error().message);
  }
  if (auto name = shardedNameIn(sql, input.map, input.dialect)) {
    if (startsWithLoadData(sql, input.dialect)) return refuseLoadData(*name);
    return refuse(RouteErrorCode::kParseError, "shardproxy: cannot parse a statement that names sharded table " +
                                                   *name + " (" + parsed.error().message + ")");
  }
  return passthrough(sql, input.default_backend);
}

}  // namespace sp::routing
