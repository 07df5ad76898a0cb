#include "routing/conditions.hpp"

#include <algorithm>

namespace sp::routing {
namespace {

using parser::BinaryOp;
using parser::Expr;
using parser::ExprKind;

bool isColumn(const Expr& e, const ColumnMatcher& m) {
  return !m.column.empty() && e.kind == ExprKind::kColumn && m.matches(e.column);
}

std::optional<CompareOp> compareOpOf(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq:
    case BinaryOp::kNullSafeEq: return CompareOp::kEq;
    case BinaryOp::kLt: return CompareOp::kLt;
    case BinaryOp::kLe: return CompareOp::kLe;
    case BinaryOp::kGt: return CompareOp::kGt;
    case BinaryOp::kGe: return CompareOp::kGe;
    default: return std::nullopt;
  }
}

// The value as written (already quoted when it is a string), shortened.
std::string quoteText(std::string_view text) {
  constexpr size_t kMax = 64;
  return std::string(text.substr(0, kMax)) + (text.size() > kMax ? "..." : "");
}

// Values a key conjunct allows, or nullopt when the conjunct gives no key.
struct KeyValues {
  std::vector<uint64_t> values;
  bool depends_on_params = false;
  bool unknown = false;  // pins nothing (e.g. a `?` without a value)
  std::optional<Refusal> refusal;
};

// Folds one value into `out`; false when the conjunct cannot pin the key.
bool isPlaceholderExpr(const Expr& e) {
  return e.kind == ExprKind::kLiteral && e.literal_kind == parser::LiteralKind::kPlaceholder;
}

bool addKeyValue(const Expr& value_expr, std::string_view sql, std::span<const ParamValue> params,
                 std::string_view table, const ColumnMatcher& key, KeyValues& out) {
  out.depends_on_params |= isPlaceholderExpr(value_expr);
  KeyValue v = keyValueOf(value_expr, sql, params);
  switch (v.status) {
    case ValueStatus::kValue: out.values.push_back(v.value); return true;
    case ValueStatus::kNull: return true;  // matches no row
    case ValueStatus::kNotLiteral: return false;
    case ValueStatus::kNeedsParam: out.depends_on_params = true; return false;
    case ValueStatus::kNegative:
      out.refusal = Refusal{RouteErrorCode::kNegativeKey,
                            "shardproxy: " + std::string(key.column) + " of sharded table " + std::string(table) +
                                " is compared with negative value " + quoteText(value_expr.range.text(sql)) +
                                ": shard keys are unsigned; use the canonical id (a Bot API chat id "
                                "-100XXXXXXXXXX is channel id XXXXXXXXXX)"};
      return false;
    case ValueStatus::kOutOfRange:
    case ValueStatus::kInexact:
      out.refusal = Refusal{RouteErrorCode::kBadKeyValue,
                            "shardproxy: " + std::string(key.column) + " of sharded table " + std::string(table) +
                                " is compared with " + quoteText(value_expr.range.text(sql)) +
                                ", which is not an exact unsigned 64-bit integer: write the key as an "
                                "integer literal (a quoted key must be digits)"};
      return false;
  }
  return false;
}

std::optional<KeyValues> keyValuesOf(const Expr& e, std::string_view sql, const ColumnMatcher& key,
                                     std::string_view table, std::span<const ParamValue> params) {
  KeyValues out;
  if (e.kind == ExprKind::kBinary && e.args.size() == 2 &&
      (e.binary_op == BinaryOp::kEq || e.binary_op == BinaryOp::kNullSafeEq)) {
    const Expr* value = isColumn(*e.args[0], key) ? e.args[1].get() : isColumn(*e.args[1], key) ? e.args[0].get() : nullptr;
    if (!value || isColumn(*value, key)) return std::nullopt;
    // key <=> NULL is true for rows whose key IS NULL, which may live on any shard.
    if (e.binary_op == BinaryOp::kNullSafeEq && keyValueOf(*value, sql, params).status == ValueStatus::kNull) {
      return std::nullopt;
    }
    if (!addKeyValue(*value, sql, params, table, key, out) && !out.refusal) {
      return out.depends_on_params ? std::optional(KeyValues{{}, true, true, {}}) : std::nullopt;
    }
    return out;
  }
  if (e.kind == ExprKind::kIn && !e.negated && !e.subquery && !e.args.empty() && isColumn(*e.args[0], key)) {
    for (size_t i = 1; i < e.args.size(); ++i) {
      if (!addKeyValue(*e.args[i], sql, params, table, key, out)) {
        if (out.refusal) return out;
        return out.depends_on_params ? std::optional(KeyValues{{}, true, true, {}}) : std::nullopt;
      }
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool ColumnMatcher::matches(const parser::ColumnRef& ref) const {
  if (!equalsIgnoreCase(ref.column.value, column)) return false;
  return ref.table.empty() || equalsIgnoreCase(ref.table.value, qualifier);
}

namespace {

// False when an operator is written `||`: under sql_mode PIPES_AS_CONCAT
// (ANSI) that is concatenation, and the lexer does not follow the mode.
bool collectDisjuncts(const Expr& e, std::string_view sql, std::vector<const Expr*>& out) {
  if (e.kind == ExprKind::kBinary && e.binary_op == parser::BinaryOp::kOr && e.args.size() == 2) {
    uint32_t op_begin = e.args[0]->range.end, op_end = e.args[1]->range.begin;
    if (op_begin <= op_end && sql.substr(op_begin, op_end - op_begin).find("||") != std::string_view::npos) {
      return false;
    }
    return collectDisjuncts(*e.args[0], sql, out) && collectDisjuncts(*e.args[1], sql, out);
  }
  out.push_back(&e);
  return true;
}

// `a OR b OR ...` pins the key only when every disjunct does (each may be an
// AND chain of its own): then to the union of their values. nullopt when
// some disjunct leaves the key open (`conv_id = 1 OR seq = 5`). The rows a
// disjunct selects live on its own values' shards, so sending the whole
// WHERE to each of those shards is exact.
std::optional<KeyValues> disjunctionKey(const Expr& e, std::string_view sql, const ColumnMatcher& key,
                                        std::string_view table, std::span<const ParamValue> params) {
  std::vector<const Expr*> disjuncts;
  if (!collectDisjuncts(e, sql, disjuncts)) return std::nullopt;
  KeyValues out;
  bool open = false;
  for (const Expr* d : disjuncts) {
    KeyConstraint k = extractKey(d, sql, key, table, params);
    out.depends_on_params |= k.depends_on_params;
    if (k.refusal && !out.refusal) out.refusal = k.refusal;
    if (k.kind == KeyConstraint::Kind::kNone) open = true;
    out.values.insert(out.values.end(), k.values.begin(), k.values.end());
  }
  if (open) {
    if (!out.depends_on_params) return std::nullopt;
    out.unknown = true;  // a `?` may still pin it; decided with the values
    out.refusal.reset();
    out.values.clear();
  }
  return out;
}

}  // namespace

KeyConstraint extractKey(const Expr* where, std::string_view sql, const ColumnMatcher& key, std::string_view table,
                         std::span<const ParamValue> params) {
  KeyConstraint result;
  std::optional<std::vector<uint64_t>> allowed;  // intersection so far
  forEachConjunct(where, [&](const Expr& conjunct) {
    if (result.refusal) return;
    const bool disjunction = conjunct.kind == ExprKind::kBinary && conjunct.binary_op == parser::BinaryOp::kOr;
    auto values = disjunction ? disjunctionKey(conjunct, sql, key, table, params)
                              : keyValuesOf(conjunct, sql, key, table, params);
    if (!values) return;
    result.depends_on_params |= values->depends_on_params;
    if (values->refusal) {
      result.refusal = std::move(values->refusal);
      return;
    }
    if (values->unknown) return;  // e.g. a `?` whose value is not known yet
    if (!result.first_seen && !values->values.empty()) result.first_seen = values->values.front();
    if (conjunct.kind == ExprKind::kIn) result.in_lists.push_back(&conjunct);
    std::sort(values->values.begin(), values->values.end());
    values->values.erase(std::unique(values->values.begin(), values->values.end()), values->values.end());
    if (!allowed) {
      allowed = std::move(values->values);
      return;
    }
    std::vector<uint64_t> both;
    std::set_intersection(allowed->begin(), allowed->end(), values->values.begin(), values->values.end(),
                          std::back_inserter(both));
    *allowed = std::move(both);
  });
  if (result.refusal || !allowed) return result;
  result.kind = allowed->empty() ? KeyConstraint::Kind::kEmpty : KeyConstraint::Kind::kValues;
  result.values = std::move(*allowed);
  return result;
}

}  // namespace sp::routing

namespace sp::routing {
namespace {

struct MonthScan {
  const ColumnMatcher& month_column;
  const ColumnMatcher& time_column;
  std::string_view sql;
  std::span<const ParamValue> params;
  MonthConstraint& out;

  // Applies `column op value` when `column` is the month or the time column.
  void bound(const Expr& column, CompareOp op, const Expr& value) {
    bool is_month = isColumn(column, month_column);
    if (!is_month && !isColumn(column, time_column)) return;
    auto range = rangeOf(is_month, op, value);
    if (!range) return;
    if (is_month) out.from_month_column.intersect(*range);
    out.combined.intersect(*range);
  }

  std::optional<MonthRange> rangeOf(bool is_month, CompareOp op, const Expr& value) {
    out.depends_on_params |= isPlaceholderExpr(value);
    DateBound d = dateValueOf(value, sql, params);
    switch (d.status) {
      case ValueStatus::kValue:
        return is_month ? monthRangeForMonthColumn(op, d.value) : monthRangeForTimeColumn(op, d.value);
      case ValueStatus::kNull: return MonthRange{1, 0};  // never true: empty
      case ValueStatus::kNeedsParam: out.depends_on_params = true; return std::nullopt;
      case ValueStatus::kNotLiteral: return std::nullopt;
      default: break;
    }
    std::string_view col = is_month ? month_column.column : time_column.column;
    out.refusal = Refusal{RouteErrorCode::kBadMonthValue,
                          "shardproxy: " + std::string(col) + " is compared with " +
                              quoteText(value.range.text(sql)) +
                              ", which is not a date literal: write 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS[.ffffff]'"};
    return std::nullopt;
  }

  // column IN (v1, v2, ...): the union of the values' months.
  void inList(const Expr& e) {
    bool is_month = isColumn(*e.args[0], month_column);
    if (!is_month && !isColumn(*e.args[0], time_column)) return;
    MonthRange all{1, 0};
    for (size_t i = 1; i < e.args.size(); ++i) {
      auto r = rangeOf(is_month, CompareOp::kEq, *e.args[i]);
      if (!r) return;  // unknown element: no bound from this conjunct
      if (r->isEmpty()) continue;
      all = all.isEmpty() ? *r : MonthRange{std::min(*all.lo, *r->lo), std::max(*all.hi, *r->hi)};
    }
    if (is_month) out.from_month_column.intersect(all);
    out.combined.intersect(all);
  }

  void conjunct(const Expr& e) {
    if (out.refusal) return;
    if (e.kind == ExprKind::kBinary && e.args.size() == 2) {
      auto op = compareOpOf(e.binary_op);
      if (!op) return;
      bound(*e.args[0], *op, *e.args[1]);
      bound(*e.args[1], flip(*op), *e.args[0]);
    } else if (e.kind == ExprKind::kBetween && !e.negated && e.args.size() == 3) {
      bound(*e.args[0], CompareOp::kGe, *e.args[1]);
      bound(*e.args[0], CompareOp::kLe, *e.args[2]);
    } else if (e.kind == ExprKind::kIn && !e.negated && !e.subquery && e.args.size() >= 2) {
      inList(e);
    }
  }
};

}  // namespace

MonthConstraint extractMonths(const Expr* where, std::string_view sql, const ColumnMatcher& month_column,
                              const ColumnMatcher& time_column, std::span<const ParamValue> params) {
  MonthConstraint out;
  MonthScan scan{month_column, time_column, sql, params, out};
  forEachConjunct(where, [&](const Expr& e) { scan.conjunct(e); });
  return out;
}

}  // namespace sp::routing
