#include "routing/merge/merge_compute.hpp"

#include <algorithm>

#include "routing/merge/decimal.hpp"

namespace sp::routing {
namespace {

using Value = std::optional<std::string>;  // nullopt: SQL NULL
using Result = std::expected<Value, std::string>;
using Kind = ComputedNode::Kind;

constexpr int kNoDivision = -1;
constexpr uint32_t kAvgPrecisionIncrement = 4;  // MariaDB's div_precision_increment default

class Evaluator {
 public:
  Evaluator(const ComputedExpr& expr, const MergedRow& row, const std::vector<ValueClass>& classes)
      : expr_(expr), row_(row), classes_(classes) {}

  // `div_scale`: the digits a division directly below (through IFNULL /
  // COALESCE / ROUND only) is rounded to; kNoDivision inside arithmetic.
  Result eval(uint32_t index, int div_scale) {
    const ComputedNode& n = expr_.nodes[index];
    switch (n.kind) {
      case Kind::kColumn: {
        const Value& v = row_[n.column];
        if (!v) return Value();
        if (classes_[n.column] != ValueClass::kExact || !decimal::isDecimal(*v)) {
          return fail("an operand ('" + *v + "') is not an exact number");
        }
        return v;
      }
      case Kind::kLiteral: return n.literal;
      case Kind::kNeg: {
        auto a = eval(n.args[0], kNoDivision);
        if (!a || !*a) return a;
        return wrap(decimal::negate(**a));
      }
      case Kind::kAdd:
      case Kind::kSub:
      case Kind::kMul: {
        auto a = eval(n.args[0], kNoDivision);
        if (!a) return a;
        auto b = eval(n.args[1], kNoDivision);
        if (!b) return b;
        if (!*a || !*b) return Value();
        if (n.kind == Kind::kMul) return wrap(decimal::multiply(**a, **b));
        if (n.kind == Kind::kAdd) return wrap(decimal::add(**a, **b));
        auto negated = decimal::negate(**b);
        if (!negated) return fail("bad operand");
        return wrap(decimal::add(**a, *negated));
      }
      case Kind::kDiv: {
        if (div_scale == kNoDivision) return fail("a quotient is used in further arithmetic");
        used_division_ = true;
        auto a = eval(n.args[0], kNoDivision);
        if (!a) return a;
        auto b = eval(n.args[1], kNoDivision);
        if (!b) return b;
        if (!*a || !*b) return Value();
        if (decimal::compare(**b, "0") == 0) return Value();  // the server's SELECT: NULL (and a warning)
        if (n.avg_rounded_first) {
          // The grouped AVG as MariaDB's temporary table holds it, then rounded again if asked.
          auto avg = decimal::divideBy(**a, **b, decimal::scaleOf(**a) + kAvgPrecisionIncrement);
          if (!avg) return fail("a divisor has more than 19 digits");
          if (decimal::scaleOf(*avg) <= static_cast<uint32_t>(div_scale)) return Value(*avg);
          return wrap(decimal::rescale(*avg, static_cast<uint32_t>(div_scale)));
        }
        auto q = decimal::divideBy(**a, **b, static_cast<uint32_t>(div_scale));
        if (!q) return fail("a divisor has more than 19 digits");
        return Value(*q);
      }
      case Kind::kFirstNonNull:
        for (uint32_t arg : n.args) {
          auto v = eval(arg, div_scale);
          if (!v || *v) return v;
        }
        return Value();
      case Kind::kRound: {
        bool outer = used_division_;
        used_division_ = false;
        auto v = eval(n.args[0], static_cast<int>(n.digits));
        bool divided = used_division_;
        used_division_ = outer || divided;
        if (!v || !*v) return v;
        if (divided) rounded_division_digits_ = std::max<int>(rounded_division_digits_, static_cast<int>(n.digits));
        if (decimal::scaleOf(**v) <= n.digits) return v;
        return wrap(decimal::rescale(**v, n.digits));
      }
    }
    return fail("unknown node");
  }

  // A ROUND over a quotient to more digits than the result keeps would round
  // twice (the server rounds a 9-digit quotient): refused instead.
  int roundedDivisionDigits() const { return rounded_division_digits_; }

 private:
  Result fail(const std::string& why) const {
    return std::unexpected("shardproxy: cannot compute " + expr_.text + " exactly across shards: " + why);
  }
  Result wrap(std::optional<std::string> v) const {
    if (!v) return fail("bad operand");
    return Value(std::move(*v));
  }

  const ComputedExpr& expr_;
  const MergedRow& row_;
  const std::vector<ValueClass>& classes_;
  bool used_division_ = false;
  int rounded_division_digits_ = -1;
};

bool isIntegerType(protocol::ColumnType t) {
  using T = protocol::ColumnType;
  return t == T::kTiny || t == T::kShort || t == T::kLong || t == T::kLongLong || t == T::kInt24;
}

// The server fails a BIGINT result out of its range (1690) where exact
// arithmetic would go on: so does the proxy, instead of a value the server never gives.
std::expected<std::optional<std::string>, std::string> inIntegerRange(const ComputedExpr& expr, const std::string& v,
                                                                      const protocol::ColumnDefinition41& result) {
  const bool is_unsigned = result.flags & protocol::column_flag::kUnsigned;
  const std::string_view low = is_unsigned ? "0" : "-9223372036854775808";
  const std::string_view high = is_unsigned ? "18446744073709551615" : "9223372036854775807";
  if (decimal::compare(v, low) < 0 || decimal::compare(v, high) > 0) {
    return std::unexpected(std::string("shardproxy: BIGINT") + (is_unsigned ? " UNSIGNED" : "") +
                           " value is out of range in '" + expr.text + "'");
  }
  return std::optional<std::string>(v);
}

}  // namespace

std::expected<std::optional<std::string>, std::string> evaluateComputed(
    const ComputedExpr& expr, const MergedRow& row, const std::vector<ValueClass>& classes,
    const protocol::ColumnDefinition41& result) {
  using T = protocol::ColumnType;
  const bool is_decimal = result.type == T::kNewDecimal || result.type == T::kDecimal;
  if (!is_decimal && !isIntegerType(result.type)) {
    return std::unexpected("shardproxy: cannot compute " + expr.text +
                           " exactly across shards: its type is not an integer or DECIMAL");
  }
  Evaluator evaluator(expr, row, classes);
  auto v = evaluator.eval(expr.root, is_decimal ? result.decimals : 0);
  if (!v) return v;
  if (evaluator.roundedDivisionDigits() > static_cast<int>(result.decimals)) {
    return std::unexpected("shardproxy: cannot compute " + expr.text +
                           " exactly across shards: ROUND keeps more digits of a quotient than its result shows");
  }
  if (!*v) return v;
  if (is_decimal) {
    auto out = decimal::rescale(**v, result.decimals);
    if (!out) return std::unexpected("shardproxy: cannot compute " + expr.text + " exactly across shards");
    return Value(*out);
  }
  // An integer result: the exact value has no fraction (or only zeros).
  const std::string& text = **v;
  size_t dot = text.find('.');
  if (dot == std::string::npos) return inIntegerRange(expr, text, result);
  if (text.find_first_not_of('0', dot + 1) != std::string::npos) {
    return std::unexpected("shardproxy: cannot compute " + expr.text +
                           " exactly across shards: a fraction in an integer result");
  }
  std::string whole = text.substr(0, dot);
  if (whole == "-0") whole = "0";
  return inIntegerRange(expr, whole, result);
}

}  // namespace sp::routing
