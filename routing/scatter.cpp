// Scatter planning: a SELECT spread over several shards (key IN lists on
// several shards, or no key under the table's scatter policy) becomes one
// target per shard plus a MergeSpec. Each shard's SQL is the client's text
// with byte-exact edits (routing/rewrite.hpp):
//  - AVG(x) -> SUM(x), with a COUNT(x) helper column;
//  - COUNT/SUM(DISTINCT x): x becomes a helper column and is added to the
//    shard's GROUP BY, so the proxy sees every distinct value once per shard;
//  - helpers appended to the select list for GROUP BY / ORDER BY / HAVING
//    expressions the proxy needs and the select list lacks;
//  - aggregate queries: HAVING, ORDER BY and LIMIT removed (evaluated on the
//    merged groups; a shard cannot judge partial groups);
//  - row queries: ORDER BY kept (shards return sorted streams to merge),
//    LIMIT n OFFSET m sent as LIMIT m+n.
#include <algorithm>
#include <unordered_map>

#include "parser/lexer.hpp"
#include "parser/literal_text.hpp"
#include "routing/merge/decimal.hpp"
#include "routing/merge/merge_metadata.hpp"
#include "routing/merge/compare_coerce.hpp"
#include "routing/planner_detail.hpp"

namespace sp::routing::detail {
namespace {

enum class Agg : uint8_t { kNone, kCount, kSum, kMin, kMax, kAvg, kCountDistinct, kSumDistinct, kOther };

Agg aggregateOf(const parser::Expr& e) {
  if (e.kind != parser::ExprKind::kFunction) return Agg::kNone;
  std::string_view n = e.name;
  if (equalsIgnoreCase(n, "COUNT")) return e.distinct ? Agg::kCountDistinct : Agg::kCount;
  if (equalsIgnoreCase(n, "SUM")) return e.distinct ? Agg::kSumDistinct : Agg::kSum;
  if (equalsIgnoreCase(n, "MIN")) return Agg::kMin;
  if (equalsIgnoreCase(n, "MAX")) return Agg::kMax;
  if (equalsIgnoreCase(n, "AVG")) return e.distinct ? Agg::kOther : Agg::kAvg;
  for (std::string_view other : {"GROUP_CONCAT", "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP",
                                 "VAR_SAMP", "BIT_AND", "BIT_OR", "BIT_XOR", "JSON_ARRAYAGG", "JSON_OBJECTAGG"}) {
    if (equalsIgnoreCase(n, other)) return Agg::kOther;
  }
  return Agg::kNone;
}

bool containsAggregate(const parser::Expr& e) {
  if (aggregateOf(e) != Agg::kNone) return true;
  for (const auto& a : e.args) {
    if (a && containsAggregate(*a)) return true;
  }
  return (e.case_operand && containsAggregate(*e.case_operand)) || (e.case_else && containsAggregate(*e.case_else));
}

MergeOp mergeOpOf(Agg agg) {
  switch (agg) {
    case Agg::kCount: return MergeOp::kCount;
    case Agg::kSum: return MergeOp::kSum;
    case Agg::kMin: return MergeOp::kMin;
    case Agg::kMax: return MergeOp::kMax;
    case Agg::kAvg: return MergeOp::kAvg;
    case Agg::kCountDistinct: return MergeOp::kCountDistinct;
    case Agg::kSumDistinct: return MergeOp::kSumDistinct;
    default: return MergeOp::kValue;
  }
}

// Expression text compared loosely: case, spacing and backticks ignored.
std::string normalized(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '`') continue;
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  return out;
}

std::optional<uint64_t> integerLiteral(const parser::Expr* e, std::string_view sql) {
  if (!e || e->kind != parser::ExprKind::kLiteral || e->literal_kind != parser::LiteralKind::kInteger) {
    return std::nullopt;
  }
  std::string_view t = e->range.text(sql);
  uint64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

class ScatterBuilder {
 public:
  ScatterBuilder(const RoutingContext& ctx, bool keyless)
      : ctx_(ctx), sel_(*ctx.statement.select), sql_(ctx.sql), keyless_(keyless) {}

  // Fills spec_ and edits_, or returns the refusal.
  std::optional<Plan> build();
  MergeSpec spec_;
  std::vector<TextEdit> edits_;  // common to every shard

 private:
  Plan unsupported(const std::string& what) const {
    return refuse(RouteErrorCode::kUnsupported, "shardproxy: SELECT on sharded table " + ctx_.rule->name +
                                                    " spans several shards and " + what +
                                                    ", which is not supported across shards");
  }
  std::optional<Plan> checkShape() const;
  bool isAggregateQuery() const;
  std::optional<Plan> buildAggregate();
  std::optional<Plan> buildRows();
  std::optional<Plan> addItems();
  uint32_t addHelper(const std::string& text, MergeOp op, uint32_t helper = 0);
  // The merged column for an expression of GROUP BY / HAVING / ORDER BY.
  std::expected<uint32_t, Plan> resolve(const parser::Expr& e, bool allow_position);
  std::expected<uint32_t, Plan> resolveAggregate(const parser::Expr& e, Agg agg);
  std::optional<Plan> setDistinctArg(const parser::Expr& call, uint32_t* helper);
  // An expression over aggregates evaluated at the proxy (MergeOp::kComputed):
  // returns its index in spec_.computed.
  std::expected<uint32_t, Plan> addComputed(const parser::Expr& e);
  std::expected<uint32_t, Plan> compileNode(const parser::Expr& e, ComputedExpr& out, bool in_arithmetic);
  std::optional<Plan> addHaving();
  bool groupsInTemporaryTable() const;
  std::optional<Plan> readLimit(uint64_t& count, uint64_t& offset, bool& has) const;
  void removeClause(std::string_view keyword, uint32_t expr_begin, uint32_t end);

  const RoutingContext& ctx_;
  const parser::SelectStatement& sel_;
  std::string_view sql_;
  bool keyless_;
  std::vector<std::string> helpers_;
  std::unordered_map<std::string, uint32_t> by_text_;  // normalized expression -> merged column
  std::unordered_map<std::string, uint32_t> aliases_;  // lower-case alias -> item column
  std::optional<std::string> distinct_arg_;            // normalized text of the one COUNT/SUM(DISTINCT) argument
  uint32_t distinct_helper_ = 0;
  const parser::Expr* distinct_expr_ = nullptr;
};

std::optional<Plan> ScatterBuilder::checkShape() const {
  if (sel_.sql_calc_found_rows) return unsupported("uses SQL_CALC_FOUND_ROWS");
  if (sel_.lock != parser::LockMode::kNone) return unsupported("locks rows (FOR UPDATE / LOCK IN SHARE MODE)");
  if (!sel_.into.empty()) return unsupported("selects INTO variables or a file");
  if (sel_.with_rollup) return unsupported("uses WITH ROLLUP");
  // Each shard would number, rank and sum over its own rows only.
  if (ctx_.statement.uses_window_functions) return unsupported("uses window functions (OVER)");
  if (!sel_.unions.empty()) return unsupported("uses UNION");
  return std::nullopt;
}

bool ScatterBuilder::isAggregateQuery() const {
  if (!sel_.group_by.empty()) return true;
  for (const auto& item : sel_.items) {
    if (item.expr && containsAggregate(*item.expr)) return true;
  }
  return sel_.having && containsAggregate(*sel_.having);
}

uint32_t ScatterBuilder::addHelper(const std::string& text, MergeOp op, uint32_t helper) {
  auto key = normalized(text);
  if (auto it = by_text_.find(key); it != by_text_.end() && spec_.columns[it->second].op == op) return it->second;
  auto index = static_cast<uint32_t>(spec_.columns.size());
  spec_.columns.push_back({op, index, helper, false, {}});
  helpers_.push_back(text);
  by_text_.emplace(key, index);
  return index;
}

std::optional<Plan> ScatterBuilder::setDistinctArg(const parser::Expr& call, uint32_t* helper) {
  if (call.args.size() != 1) return unsupported("uses " + std::string(call.name) + "(DISTINCT ...) of several columns");
  std::string text(call.args[0]->range.text(sql_));
  if (distinct_arg_ && *distinct_arg_ != normalized(text)) {
    return unsupported("uses DISTINCT aggregates of different expressions");
  }
  if (!distinct_arg_) {
    distinct_arg_ = normalized(text);
    distinct_expr_ = call.args[0].get();
    distinct_helper_ = addHelper(text, MergeOp::kValue);
  }
  *helper = distinct_helper_;
  return std::nullopt;
}

std::optional<Plan> ScatterBuilder::addItems() {
  for (uint32_t i = 0; i < sel_.items.size(); ++i) {
    const parser::SelectItem& item = sel_.items[i];
    const parser::Expr& e = *item.expr;
    if (e.kind == parser::ExprKind::kStar) return unsupported("mixes * with aggregates");
    Agg agg = aggregateOf(e);
    if (agg == Agg::kOther) return unsupported("uses aggregate " + std::string(e.name) + (e.distinct ? "(DISTINCT)" : ""));
    MergeOp op = agg == Agg::kNone && containsAggregate(e) ? MergeOp::kComputed : mergeOpOf(agg);
    spec_.columns.push_back({op, i, 0, true, {}});
    if (!item.alias.empty()) aliases_.emplace(normalized(item.alias.value), i);
    by_text_.emplace(normalized(e.range.text(sql_)), i);
  }
  // Helpers only after every item holds its position.
  for (uint32_t i = 0; i < sel_.items.size(); ++i) {
    const parser::SelectItem& item = sel_.items[i];
    const parser::Expr& e = *item.expr;
    MergeColumn& column = spec_.columns[i];
    if (column.op == MergeOp::kAvg) {
      if (e.name.data() < sql_.data() || e.name.data() + e.name.size() > sql_.data() + sql_.size()) {
        return unsupported("uses AVG in a form the rewriter cannot edit");
      }
      auto name_begin = static_cast<uint32_t>(e.name.data() - sql_.data());
      edits_.push_back({name_begin, name_begin + static_cast<uint32_t>(e.name.size()), "SUM"});
      std::string count = "COUNT(" + std::string(e.args.empty() ? "*" : e.args[0]->range.text(sql_)) + ")";
      uint32_t helper = addHelper(count, MergeOp::kCount);
      spec_.columns[i].helper = helper;
      if (item.alias.empty()) spec_.columns[i].name = std::string(e.range.text(sql_));
    } else if (column.op == MergeOp::kCountDistinct || column.op == MergeOp::kSumDistinct) {
      uint32_t helper = 0;
      if (auto refusal = setDistinctArg(e, &helper)) return refusal;
      spec_.columns[i].helper = helper;
    } else if (column.op == MergeOp::kComputed) {
      auto computed = addComputed(e);
      if (!computed) return computed.error();
      spec_.columns[i].helper = *computed;
    }
  }
  return std::nullopt;
}

std::expected<uint32_t, Plan> ScatterBuilder::addComputed(const parser::Expr& e) {
  ComputedExpr expr;
  expr.text = std::string(e.range.text(sql_));
  auto root = compileNode(e, expr, false);
  if (!root) return std::unexpected(root.error());
  expr.root = *root;
  spec_.computed.push_back(std::move(expr));
  return static_cast<uint32_t>(spec_.computed.size() - 1);
}

std::expected<uint32_t, Plan> ScatterBuilder::compileNode(const parser::Expr& e, ComputedExpr& out,
                                                          bool in_arithmetic) {
  using Kind = ComputedNode::Kind;
  auto push = [&](ComputedNode node) {
    out.nodes.push_back(std::move(node));
    return static_cast<uint32_t>(out.nodes.size() - 1);
  };
  auto refuse = [&](const std::string& why) -> std::expected<uint32_t, Plan> {
    return std::unexpected(unsupported("computes " + out.text + " from aggregates " + why +
                                       " (the proxy computes + - * with exact numbers, one / last, ROUND, "
                                       "IFNULL and COALESCE over COUNT, SUM, MIN, MAX and AVG)"));
  };
  auto child = [&](const parser::Expr& c, bool arithmetic, ComputedNode& node) -> std::optional<Plan> {
    auto index = compileNode(c, out, arithmetic);
    if (!index) return index.error();
    node.args.push_back(*index);
    return std::nullopt;
  };
  Agg agg = aggregateOf(e);
  if (agg == Agg::kAvg) {
    // AVG(x) is SUM(x) / COUNT(x): a quotient, so only at the top (or under ROUND / IFNULL).
    if (in_arithmetic) return refuse("with AVG inside further arithmetic");
    std::string arg = e.args.empty() ? "*" : std::string(e.args[0]->range.text(sql_));
    ComputedNode sum{Kind::kColumn, addHelper("SUM(" + arg + ")", MergeOp::kSum), {}, {}, 0};
    ComputedNode count{Kind::kColumn, addHelper("COUNT(" + arg + ")", MergeOp::kCount), {}, {}, 0};
    uint32_t a = push(sum);
    uint32_t b = push(count);
    ComputedNode avg{Kind::kDiv, 0, {}, {a, b}, 0};
    avg.avg_rounded_first = true;  // refined in groupsInTemporaryTable() once the spec is complete
    return push(std::move(avg));
  }
  if (agg != Agg::kNone) {
    auto column = resolveAggregate(e, agg);
    if (!column) return std::unexpected(column.error());
    return push(ComputedNode{Kind::kColumn, *column, {}, {}, 0});
  }
  switch (e.kind) {
    case parser::ExprKind::kLiteral:
      switch (e.literal_kind) {
        case parser::LiteralKind::kInteger:
        case parser::LiteralKind::kDecimal:
          return push(ComputedNode{Kind::kLiteral, 0, std::string(parser::literalText(e, sql_)), {}, 0});
        case parser::LiteralKind::kNull: return push(ComputedNode{Kind::kLiteral, 0, std::nullopt, {}, 0});
        case parser::LiteralKind::kTrue: return push(ComputedNode{Kind::kLiteral, 0, std::string("1"), {}, 0});
        case parser::LiteralKind::kFalse: return push(ComputedNode{Kind::kLiteral, 0, std::string("0"), {}, 0});
        default: return refuse("with a literal that is not an exact number");
      }
    case parser::ExprKind::kColumn: {
      auto column = resolve(e, false);
      if (!column) return std::unexpected(column.error());
      return push(ComputedNode{Kind::kColumn, *column, {}, {}, 0});
    }
    case parser::ExprKind::kUnary: {
      if (e.unary_op != parser::UnaryOp::kNegate && e.unary_op != parser::UnaryOp::kPlus) break;
      ComputedNode node{e.unary_op == parser::UnaryOp::kNegate ? Kind::kNeg : Kind::kFirstNonNull, 0, {}, {}, 0};
      if (auto r = child(*e.args[0], e.unary_op == parser::UnaryOp::kNegate || in_arithmetic, node)) return std::unexpected(*r);
      return push(std::move(node));
    }
    case parser::ExprKind::kBinary: {
      Kind kind;
      switch (e.binary_op) {
        case parser::BinaryOp::kAdd: kind = Kind::kAdd; break;
        case parser::BinaryOp::kSub: kind = Kind::kSub; break;
        case parser::BinaryOp::kMul: kind = Kind::kMul; break;
        case parser::BinaryOp::kDiv:
          if (in_arithmetic) return refuse("with a quotient inside further arithmetic");
          kind = Kind::kDiv;
          break;
        default: return refuse("with the operator in " + std::string(e.range.text(sql_)));
      }
      ComputedNode node{kind, 0, {}, {}, 0};
      for (const auto& a : e.args) {
        if (auto r = child(*a, true, node)) return std::unexpected(*r);
      }
      return push(std::move(node));
    }
    case parser::ExprKind::kFunction: {
      std::string_view n = e.name;
      if ((equalsIgnoreCase(n, "IFNULL") && e.args.size() == 2) || (equalsIgnoreCase(n, "COALESCE") && !e.args.empty())) {
        ComputedNode node{Kind::kFirstNonNull, 0, {}, {}, 0};
        for (const auto& a : e.args) {
          if (auto r = child(*a, in_arithmetic, node)) return std::unexpected(*r);
        }
        return push(std::move(node));
      }
      if (equalsIgnoreCase(n, "ROUND") && (e.args.size() == 1 || e.args.size() == 2)) {
        ComputedNode node{Kind::kRound, 0, {}, {}, 0};
        if (e.args.size() == 2) {
          auto digits = integerLiteral(e.args[1].get(), sql_);
          if (!digits || *digits > 30) return refuse("with ROUND to other than 0..30 digits");
          node.digits = static_cast<uint32_t>(*digits);
        }
        if (auto r = child(*e.args[0], false, node)) return std::unexpected(*r);
        return push(std::move(node));
      }
      return refuse("with " + std::string(e.name) + "()");
    }
    default: break;
  }
  return refuse("with " + std::string(e.range.text(sql_)));
}

std::expected<uint32_t, Plan> ScatterBuilder::resolveAggregate(const parser::Expr& e, Agg agg) {
  std::string text(e.range.text(sql_));
  if (auto it = by_text_.find(normalized(text)); it != by_text_.end()) return it->second;
  if (agg == Agg::kOther) return std::unexpected(unsupported("uses aggregate " + std::string(e.name)));
  std::string arg = e.args.empty() ? "*" : std::string(e.args[0]->range.text(sql_));
  if (agg == Agg::kAvg) {
    uint32_t count = addHelper("COUNT(" + arg + ")", MergeOp::kCount);
    uint32_t sum = addHelper("SUM(" + arg + ")", MergeOp::kAvg, count);
    by_text_.emplace(normalized(text), sum);
    return sum;
  }
  if (agg == Agg::kCountDistinct || agg == Agg::kSumDistinct) {
    uint32_t helper = 0;
    if (auto refusal = setDistinctArg(e, &helper)) return std::unexpected(*refusal);
    return addHelper(text, mergeOpOf(agg), helper);
  }
  return addHelper(text, mergeOpOf(agg));
}

std::expected<uint32_t, Plan> ScatterBuilder::resolve(const parser::Expr& e, bool allow_position) {
  if (auto pos = integerLiteral(&e, sql_); pos && allow_position) {
    if (*pos < 1 || *pos > sel_.items.size()) return std::unexpected(unsupported("names a column position out of range"));
    return static_cast<uint32_t>(*pos - 1);
  }
  if (e.kind == parser::ExprKind::kColumn && e.column.table.empty()) {
    if (auto it = aliases_.find(normalized(e.column.column.value)); it != aliases_.end()) return it->second;
  }
  Agg agg = aggregateOf(e);
  if (agg != Agg::kNone) return resolveAggregate(e, agg);
  if (containsAggregate(e)) {
    // A hidden computed column: the shards compute the expression too, only
    // so that its metadata (type, scale) is the server's.
    std::string text(e.range.text(sql_));
    if (auto it = by_text_.find(normalized(text)); it != by_text_.end()) return it->second;
    auto computed = addComputed(e);
    if (!computed) return std::unexpected(computed.error());
    uint32_t column = addHelper(text, MergeOp::kComputed);
    spec_.columns[column].helper = *computed;
    return column;
  }
  if (auto it = by_text_.find(normalized(e.range.text(sql_))); it != by_text_.end()) return it->second;
  return addHelper(std::string(e.range.text(sql_)), MergeOp::kValue);
}

std::optional<Plan> ScatterBuilder::addHaving() {
  std::optional<Plan> refusal;
  forEachConjunct(sel_.having.get(), [&](const parser::Expr& c) {
    if (refusal) return;
    bool comparison = c.kind == parser::ExprKind::kBinary && c.args.size() == 2 &&
                      (c.binary_op == parser::BinaryOp::kEq || c.binary_op == parser::BinaryOp::kNe ||
                       c.binary_op == parser::BinaryOp::kLt || c.binary_op == parser::BinaryOp::kLe ||
                       c.binary_op == parser::BinaryOp::kGt || c.binary_op == parser::BinaryOp::kGe);
    const parser::Expr* lhs = comparison ? c.args[0].get() : nullptr;
    const parser::Expr* rhs = comparison ? c.args[1].get() : nullptr;
    bool flipped = false;
    if (lhs && lhs->kind == parser::ExprKind::kLiteral) std::swap(lhs, rhs), flipped = true;
    if (!lhs || rhs->kind != parser::ExprKind::kLiteral || rhs->literal_kind == parser::LiteralKind::kPlaceholder) {
      refusal = unsupported("has a HAVING condition other than <aggregate or alias> <comparison> <literal>");
      return;
    }
    auto column = resolve(*lhs, false);
    if (!column) {
      refusal = column.error();
      return;
    }
    HavingOp op = HavingOp::kEq;
    switch (c.binary_op) {
      case parser::BinaryOp::kNe: op = HavingOp::kNe; break;
      case parser::BinaryOp::kLt: op = flipped ? HavingOp::kGt : HavingOp::kLt; break;
      case parser::BinaryOp::kLe: op = flipped ? HavingOp::kGe : HavingOp::kLe; break;
      case parser::BinaryOp::kGt: op = flipped ? HavingOp::kLt : HavingOp::kGt; break;
      case parser::BinaryOp::kGe: op = flipped ? HavingOp::kLe : HavingOp::kGe; break;
      default: break;
    }
    auto literal = havingLiteral(*rhs, sql_);  // routing/merge/compare_coerce.hpp
    if (!literal) {
      refusal = unsupported(literal.error());
      return;
    }
    spec_.having.push_back({*column, op, std::move(literal->text), literal->type});
  });
  return refusal;
}

std::optional<Plan> ScatterBuilder::readLimit(uint64_t& count, uint64_t& offset, bool& has) const {
  has = sel_.limit.count != nullptr;
  if (!has) return std::nullopt;
  auto c = integerLiteral(sel_.limit.count.get(), sql_);
  auto o = sel_.limit.offset ? integerLiteral(sel_.limit.offset.get(), sql_) : std::optional<uint64_t>(0);
  if (!c || !o) return unsupported("has a LIMIT that is not integer literals");
  count = *c;
  offset = *o;
  return std::nullopt;
}

// Removes `keyword ... end` (HAVING / ORDER BY clause) with the spacing before it.
void ScatterBuilder::removeClause(std::string_view keyword, uint32_t expr_begin, uint32_t end) {
  uint32_t begin = expr_begin;
  for (const auto& token : parser::tokenize(sql_.substr(0, expr_begin), ctx_.input.dialect)) {
    if (token.kind == parser::TokenKind::kIdentifier && equalsIgnoreCase(token.text(sql_), keyword)) begin = token.begin;
  }
  while (begin > 0 && (sql_[begin - 1] == ' ' || sql_[begin - 1] == '\n' || sql_[begin - 1] == '\t')) --begin;
  edits_.push_back({begin, end, ""});
}

bool ScatterBuilder::groupsInTemporaryTable() const {
  if (sel_.group_by.empty()) return false;
  if (sortsAfterGrouping(spec_)) return true;
  const parser::Expr& first = *sel_.group_by.front().expr;
  bool by_key = first.kind == parser::ExprKind::kColumn && equalsIgnoreCase(first.column.column.value, ctx_.rule->key);
  return !by_key;
}

std::optional<Plan> ScatterBuilder::buildAggregate() {
  spec_.aggregate = true;
  if (sel_.distinct) return unsupported("combines SELECT DISTINCT with aggregates or GROUP BY");
  if (auto refusal = addItems()) return refusal;
  for (const auto& g : sel_.group_by) {
    auto column = resolve(*g.expr, true);
    if (!column) return column.error();
    if (spec_.columns[*column].op != MergeOp::kValue) return unsupported("groups by an aggregate");
    spec_.group_by.push_back(*column);
  }
  // GROUP BY columns pinned by `col = literal` / `col IN (literal)` in the WHERE: only for the result metadata.
  forEachConjunct(sel_.where.get(), [&](const parser::Expr& c) {
    bool eq = c.kind == parser::ExprKind::kBinary && c.binary_op == parser::BinaryOp::kEq;
    bool in_one = c.kind == parser::ExprKind::kIn && !c.negated && !c.subquery;
    if (!(eq || in_one) || c.args.size() != 2) return;
    const parser::Expr* col = c.args[0].get();
    const parser::Expr* lit = c.args[1].get();
    if (col->kind == parser::ExprKind::kLiteral) std::swap(col, lit);
    if (lit->kind != parser::ExprKind::kLiteral || col->kind != parser::ExprKind::kColumn) return;
    auto it = by_text_.find(normalized(col->range.text(sql_)));
    if (it != by_text_.end()) spec_.constant_columns.push_back(it->second);
  });
  if (keyless_ && ctx_.rule->scatter == ScatterPolicy::kAggregates) {
    for (uint32_t i = 0; i < sel_.items.size(); ++i) {
      if (spec_.columns[i].op == MergeOp::kValue &&
          std::find(spec_.group_by.begin(), spec_.group_by.end(), i) == spec_.group_by.end()) {
        return refuse(RouteErrorCode::kMissingKey,
                      "shardproxy: SELECT on sharded table " + ctx_.rule->name + " needs " + keyHint(*ctx_.rule) +
                          " in the WHERE clause (scatter policy 'aggregates' allows fan-out only when every "
                          "selected column is an aggregate or a GROUP BY column)");
      }
    }
  }
  if (sel_.having) {
    if (auto refusal = addHaving()) return refusal;
    removeClause("HAVING", sel_.having->range.begin, sel_.having->range.end);
  }
  for (const auto& o : sel_.order_by) {
    auto column = resolve(*o.expr, true);
    if (!column) return column.error();
    spec_.order_by.push_back({*column, o.descending});
  }
  if (!sel_.order_by.empty()) removeClause("ORDER", sel_.order_by.front().range.begin, sel_.order_by.back().range.end);
  uint64_t count = 0, offset = 0;
  bool has_limit = false;
  if (auto refusal = readLimit(count, offset, has_limit)) return refusal;
  if (has_limit) {
    spec_.limit = count;
    spec_.offset = offset;
    uint32_t begin = sel_.limit.range.begin;
    while (begin > 0 && (sql_[begin - 1] == ' ' || sql_[begin - 1] == '\n' || sql_[begin - 1] == '\t')) --begin;
    edits_.push_back({begin, sel_.limit.range.end, ""});
  }
  // An AVG inside an expression starts from the AVG's rounded value only when
  // the server groups in a temporary table (checked on MariaDB 10.11: ROUND(
  // AVG(v), 2) gave 58.96 through a temporary table, 58.95 grouping along
  // the primary key). Inferred: GROUP BY on anything but the shard key (the
  // first primary-key column of the sharded tables), or an ORDER BY the
  // grouping order does not give.
  const bool temporary = groupsInTemporaryTable();
  for (auto& computed : spec_.computed) {
    for (auto& node : computed.nodes) {
      if (node.avg_rounded_first) node.avg_rounded_first = temporary;
    }
  }
  bool distinct_grouped = std::find(spec_.group_by.begin(), spec_.group_by.end(), distinct_helper_) != spec_.group_by.end();
  if (distinct_expr_ && !distinct_grouped) {
    std::string arg(distinct_expr_->range.text(sql_));
    if (!sel_.group_by.empty()) {
      edits_.push_back({sel_.group_by.back().range.end, sel_.group_by.back().range.end, ", " + arg});
    } else {
      uint32_t at = sel_.where ? sel_.where->range.end : sel_.from.back()->range.end;
      edits_.push_back({at, at, " GROUP BY " + arg});
    }
  }
  return std::nullopt;
}

std::optional<Plan> ScatterBuilder::buildRows() {
  // SELECT DISTINCT of plain items is a grouping in disguise (GROUP BY every
  // item): 'aggregates' allows it as it allows the GROUP BY form.
  const bool distinct_grouping =
      sel_.distinct && ctx_.rule->scatter == ScatterPolicy::kAggregates &&
      std::none_of(sel_.items.begin(), sel_.items.end(),
                   [](const parser::SelectItem& item) { return item.expr->kind == parser::ExprKind::kStar; });
  if (keyless_ && ctx_.rule->scatter != ScatterPolicy::kAllow && !distinct_grouping) {
    return refuse(RouteErrorCode::kMissingKey,
                  "shardproxy: SELECT on sharded table " + ctx_.rule->name + " needs " + keyHint(*ctx_.rule) +
                      " in the WHERE clause (its scatter policy '" + std::string(toString(ctx_.rule->scatter)) +
                      "' allows fan-out only for aggregate queries and SELECT DISTINCT)");
  }
  bool star = false;
  for (uint32_t i = 0; i < sel_.items.size(); ++i) {
    const parser::SelectItem& item = sel_.items[i];
    if (item.expr->kind == parser::ExprKind::kStar) star = true;
    spec_.columns.push_back({MergeOp::kValue, i, 0, true, {}});
    if (!item.alias.empty()) aliases_.emplace(normalized(item.alias.value), i);
    by_text_.emplace(normalized(item.expr->range.text(sql_)), i);
  }
  if (star) {  // positions unknown until the shards describe their columns: keys become helpers
    spec_.columns.clear();
    by_text_.clear();
    aliases_.clear();
  }
  for (const auto& o : sel_.order_by) {
    if (containsAggregate(*o.expr)) return unsupported("orders by an aggregate without GROUP BY");
    if (star && integerLiteral(o.expr.get(), sql_)) return unsupported("orders by position after *");
    auto column = resolve(*o.expr, true);
    if (!column) return column.error();
    uint32_t key = *column;
    if (star) key = MergeSpec::kFromEnd + *column;  // only helpers are columns here
    spec_.order_by.push_back({key, o.descending});
  }
  if (star) spec_.columns.clear();
  spec_.helper_columns = static_cast<uint32_t>(helpers_.size());
  spec_.distinct = sel_.distinct;
  if (sel_.distinct && !helpers_.empty()) return unsupported("orders SELECT DISTINCT by columns it does not select");
  uint64_t count = 0, offset = 0;
  bool has_limit = false;
  if (auto refusal = readLimit(count, offset, has_limit)) return refusal;
  if (has_limit) {
    spec_.limit = count;
    spec_.offset = offset;
    if (offset > UINT64_MAX - count) return unsupported("has a LIMIT beyond 2^64");
    if (offset) edits_.push_back({sel_.limit.range.begin, sel_.limit.range.end, "LIMIT " + std::to_string(count + offset)});
  }
  return std::nullopt;
}

std::optional<Plan> ScatterBuilder::build() {
  if (auto refusal = checkShape()) return refusal;
  auto refusal = isAggregateQuery() ? buildAggregate() : buildRows();
  if (refusal) return refusal;
  if (!helpers_.empty()) {
    std::string text;
    for (const auto& h : helpers_) text += ", " + h;
    uint32_t at = sel_.items.back().range.end;
    edits_.push_back({at, at, std::move(text)});
  }
  return std::nullopt;
}

}  // namespace

Plan planScatter(const RoutingContext& ctx, const std::vector<const parser::Expr*>& in_lists,
                 const std::vector<uint32_t>& shards, const parser::Expr* where, bool keyless) {
  ScatterBuilder builder(ctx, keyless);
  if (auto refusal = builder.build()) return *refusal;
  Plan result;
  result.kind = PlanKind::kScatter;
  result.table = ctx.rule;
  ScatterPlan scatter;
  for (uint32_t shard : shards) {
    std::vector<TextEdit> edits;
    if (auto refusal = shardEdits(ctx, in_lists, shard, where, result, edits)) return *refusal;
    edits.insert(edits.end(), builder.edits_.begin(), builder.edits_.end());
    Plan one = routeToShard(ctx, shard, std::move(edits));
    if (one.kind != PlanKind::kRoute) return one;
    scatter.targets.push_back(std::move(one.targets.front()));
  }
  if (ctx.edits_out) ctx.edits_out->clear();
  scatter.merge = std::move(builder.spec_);
  result.targets = scatter.targets;
  result.scatter = std::move(scatter);
  return result;
}

}  // namespace sp::routing::detail
