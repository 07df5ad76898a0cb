#include "routing/values.hpp"

#include <optional>
#include <string>

#include <charconv>

#include "parser/lexer.hpp"
#include "parser/literal_text.hpp"

namespace sp::routing {
namespace {

using parser::Expr;
using parser::ExprKind;
using parser::LiteralKind;

constexpr uint64_t kExactDoubleLimit = uint64_t(1) << 53;  // integers below are exact doubles

KeyValue parseUnsigned(std::string_view digits) {
  if (digits.empty()) return {ValueStatus::kInexact, 0};
  for (char c : digits) {
    if (c < '0' || c > '9') return {ValueStatus::kInexact, 0};
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) return {ValueStatus::kOutOfRange, 0};
  if (ec != std::errc() || end != digits.data() + digits.size()) return {ValueStatus::kInexact, 0};
  return {ValueStatus::kValue, v};
}

// "42.000" -> 42 (a DECIMAL compares exactly); "4.2" is no integer.
KeyValue parseDecimalLiteral(std::string_view text) {
  size_t dot = text.find('.');
  std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  for (char c : frac) {
    if (c != '0') return {ValueStatus::kInexact, 0};
  }
  std::string_view whole = text.substr(0, dot);
  return parseUnsigned(whole.empty() ? "0" : whole);
}

// 1.5e3 is a DOUBLE: an integer column compares with it as DOUBLE, exact for
// whole values below 2^53 (how a prepared statement's DOUBLE key is written
// when it runs as text).
KeyValue parseFloatLiteral(std::string_view text) {
  double d = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || end != text.data() + text.size() || !(d >= 0)) return {ValueStatus::kInexact, 0};
  if (d >= double(kExactDoubleLimit) || double(uint64_t(d)) != d) return {ValueStatus::kInexact, 0};
  return {ValueStatus::kValue, uint64_t(d)};
}

// A quoted number compared with an integer column: MariaDB 10.11 compares the
// two as DECIMAL, exactly over the whole BIGINT UNSIGNED range (checked on the
// server: k = '18446744073709551615' does not match 18446744073709551600, and
// ' 42', '42 ' and '0042.000' match 42). So: digits, a fraction of zeros, and
// spaces around them map to that integer; anything else ('42abc', '4.2', '',
// '+42', '1e3') is refused rather than guessed.
KeyValue fromQuotedText(std::string_view content) {
  auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!content.empty() && isSpace(content.front())) content.remove_prefix(1);
  while (!content.empty() && isSpace(content.back())) content.remove_suffix(1);
  if (content.empty() || content.front() == '.' || content.front() == '-' || content.front() == '+') {
    return {ValueStatus::kInexact, 0};
  }
  KeyValue v = parseDecimalLiteral(content);
  if (v.status == ValueStatus::kOutOfRange) v.status = ValueStatus::kInexact;
  return v;
}

KeyValue fromLiteralText(LiteralKind kind, std::string_view text);

// The content of a quoted literal as every sql_mode reads it: nullopt when it
// holds a backslash, an escape with the default sql_mode and a plain
// character under NO_BACKSLASH_ESCAPES (the value is then not trusted: a key
// or month bound written so is treated as inexact and the statement refused).
std::optional<std::string> portableContent(std::string_view quoted) {
  if (quoted.find('\\') != std::string_view::npos) return std::nullopt;
  return parser::unquoteString(quoted);
}
KeyValue signedNumber(std::string_view text, KeyValue (*parse)(std::string_view));

KeyValue fromParam(const ParamValue& p) {
  switch (p.kind) {
    case ParamValue::Kind::kLiteral: return fromLiteralText(p.literal_kind, p.literal_text);
    case ParamValue::Kind::kNull: return {ValueStatus::kNull, 0};
    case ParamValue::Kind::kUnsigned: return {ValueStatus::kValue, p.u};
    case ParamValue::Kind::kSigned:
      return p.i < 0 ? KeyValue{ValueStatus::kNegative, 0} : KeyValue{ValueStatus::kValue, uint64_t(p.i)};
    case ParamValue::Kind::kDouble: {
      if (p.d < 0) return {ValueStatus::kNegative, 0};
      auto whole = static_cast<uint64_t>(p.d);
      bool exact = p.d < double(kExactDoubleLimit) && double(whole) == p.d;
      return exact ? KeyValue{ValueStatus::kValue, whole} : KeyValue{ValueStatus::kInexact, 0};
    }
    case ParamValue::Kind::kString: return fromQuotedText(p.s);
    case ParamValue::Kind::kDecimal: return signedNumber(p.s, parseDecimalLiteral);
  }
  return {ValueStatus::kInexact, 0};
}

// The parser folds a minus sign into numeric literals ("-5"): -0 is 0, any
// other negative value is reported as such.
KeyValue signedNumber(std::string_view text, KeyValue (*parse)(std::string_view)) {
  if (text.empty() || text[0] != '-') return parse(text);
  KeyValue v = parse(text.substr(1));
  if (v.status == ValueStatus::kValue && v.value == 0) return v;
  return v.status == ValueStatus::kInexact ? v : KeyValue{ValueStatus::kNegative, 0};
}

KeyValue fromLiteralText(LiteralKind kind, std::string_view text) {
  switch (kind) {
    case LiteralKind::kInteger: return signedNumber(text, parseUnsigned);
    case LiteralKind::kDecimal: return signedNumber(text, parseDecimalLiteral);
    case LiteralKind::kString: {
      auto content = portableContent(text);
      return content ? fromQuotedText(*content) : KeyValue{ValueStatus::kInexact, 0};
    }
    case LiteralKind::kNull: return {ValueStatus::kNull, 0};
    case LiteralKind::kTrue: return {ValueStatus::kValue, 1};
    case LiteralKind::kFalse: return {ValueStatus::kValue, 0};
    case LiteralKind::kPlaceholder: return {ValueStatus::kNeedsParam, 0};
    case LiteralKind::kFloat: return signedNumber(text, parseFloatLiteral);
    case LiteralKind::kHex:
    case LiteralKind::kBit: return {ValueStatus::kInexact, 0};
  }
  return {ValueStatus::kInexact, 0};
}

KeyValue fromLiteral(const Expr& e, std::string_view sql, std::span<const ParamValue> params) {
  if (e.literal_kind != LiteralKind::kPlaceholder) return fromLiteralText(e.literal_kind, parser::literalText(e, sql));
  if (e.placeholder_index >= params.size()) return {ValueStatus::kNeedsParam, 0};
  return fromParam(params[e.placeholder_index]);
}

}  // namespace

KeyValue keyValueOf(const Expr& expr, std::string_view sql, std::span<const ParamValue> params) {
  if (expr.kind == ExprKind::kLiteral) return fromLiteral(expr, sql, params);
  if (expr.kind != ExprKind::kUnary || expr.args.size() != 1) return {ValueStatus::kNotLiteral, 0};
  if (expr.unary_op == parser::UnaryOp::kPlus) return keyValueOf(*expr.args[0], sql, params);
  if (expr.unary_op != parser::UnaryOp::kNegate) return {ValueStatus::kNotLiteral, 0};
  KeyValue inner = keyValueOf(*expr.args[0], sql, params);
  if (inner.status != ValueStatus::kValue) {
    // -NULL is NULL; -(-5) and friends are expressions we do not evaluate.
    return inner.status == ValueStatus::kNull ? inner : KeyValue{ValueStatus::kInexact, 0};
  }
  return inner.value == 0 ? inner : KeyValue{ValueStatus::kNegative, 0};
}

KeyValue storedKeyValueOf(const Expr& expr, std::string_view sql, std::span<const ParamValue> params) {
  KeyValue v = keyValueOf(expr, sql, params);
  if (v.status != ValueStatus::kInexact || expr.kind != ExprKind::kLiteral) return v;
  if (expr.literal_kind == LiteralKind::kString) {
    auto content = portableContent(parser::literalText(expr, sql));
    return content ? parseUnsigned(*content) : v;
  }
  if (expr.literal_kind != LiteralKind::kPlaceholder || expr.placeholder_index >= params.size()) return v;
  const ParamValue& p = params[expr.placeholder_index];
  if (p.kind == ParamValue::Kind::kString) return parseUnsigned(p.s);
  if (p.kind == ParamValue::Kind::kLiteral && p.literal_kind == LiteralKind::kString) {
    auto content = portableContent(p.literal_text);
    return content ? parseUnsigned(*content) : v;
  }
  return v;
}

DateBound dateValueOf(const Expr& expr, std::string_view sql, std::span<const ParamValue> params) {
  if (expr.kind != ExprKind::kLiteral) return {ValueStatus::kNotLiteral, {}};
  std::string content;
  switch (expr.literal_kind) {
    case LiteralKind::kString: {
      auto portable = portableContent(parser::literalText(expr, sql));
      if (!portable) return {ValueStatus::kInexact, {}};
      content = std::move(*portable);
      break;
    }
    case LiteralKind::kNull: return {ValueStatus::kNull, {}};
    case LiteralKind::kPlaceholder: {
      if (expr.placeholder_index >= params.size()) return {ValueStatus::kNeedsParam, {}};
      const ParamValue& p = params[expr.placeholder_index];
      bool literal = p.kind == ParamValue::Kind::kLiteral;
      if (p.kind == ParamValue::Kind::kNull || (literal && p.literal_kind == LiteralKind::kNull)) {
        return {ValueStatus::kNull, {}};
      }
      if (literal && p.literal_kind == LiteralKind::kString) {
        auto portable = portableContent(p.literal_text);
        if (!portable) return {ValueStatus::kInexact, {}};
        content = std::move(*portable);
      } else if (p.kind == ParamValue::Kind::kString) {
        content = p.s;
      } else {
        return {ValueStatus::kInexact, {}};
      }
      break;
    }
    default: return {ValueStatus::kInexact, {}};
  }
  auto parsed = parseDateTime(content);
  if (!parsed) return {ValueStatus::kInexact, {}};
  return {ValueStatus::kValue, *parsed};
}

}  // namespace sp::routing
