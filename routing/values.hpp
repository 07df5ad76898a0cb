// Exact conversion of SQL literals (and bound `?` parameters) to shard-key
// values and month-bound dates. Anything MySQL could compare in a way that
// does not match exactly one unsigned 64-bit value is reported, never guessed:
// the planner refuses it instead of misrouting.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "parser/ast.hpp"
#include "routing/map/month.hpp"

namespace sp::routing {

// A bound parameter of a prepared statement (decoded by the proxy).
struct ParamValue {
  enum class Kind : uint8_t {
    kNull, kSigned, kUnsigned, kDouble, kString,
    kDecimal,  // a DECIMAL-typed bound parameter: its digits in `s`, compared exactly
    kLiteral,  // a literal lifted out of the SQL text by the plan cache: judged exactly as the literal
  };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kString: the bytes, unquoted
  parser::LiteralKind literal_kind = parser::LiteralKind::kNull;  // kLiteral
  std::string_view literal_text;  // kLiteral: the token as written (points into the query)
};

enum class ValueStatus : uint8_t {
  kValue,        // exact value available
  kNull,         // SQL NULL: compares as unknown, matches no row
  kNotLiteral,   // a column, function or expression: gives no key
  kNeedsParam,   // a `?` with no parameter values supplied
  kNegative,     // a negative integer (key columns are unsigned)
  kOutOfRange,   // integer above 18446744073709551615
  kInexact,      // quoted, decimal, float, hex or bit value not mapping to exactly one integer
};

struct KeyValue {
  ValueStatus status = ValueStatus::kNotLiteral;
  uint64_t value = 0;
};

// The key value of `expr` compared with an integer key column:
//   42 -> 42; '42' -> 42 (MariaDB compares a string with an integer column as
//   DECIMAL: exact over the whole range; spaces around and a zero fraction
//   allowed); 42.000 -> 42; TRUE -> 1; -5 -> kNegative; NULL -> kNull;
//   4.2, 1e3 at or past 2^53, '4x', X'2A' -> kInexact.
KeyValue keyValueOf(const parser::Expr& expr, std::string_view sql, std::span<const ParamValue> params);

// The key value an INSERT stores from `expr` into a BIGINT UNSIGNED key
// column. Like keyValueOf (a string of digits is exact over the whole range
// there too); kept apart because storing and comparing are different server
// paths. Java's BigInteger arrives as such text.
KeyValue storedKeyValueOf(const parser::Expr& expr, std::string_view sql, std::span<const ParamValue> params);

struct DateBound {
  ValueStatus status = ValueStatus::kNotLiteral;  // kInexact: a literal that is not a valid date
  DateTimeValue value;
};

// A DATE/DATETIME bound: a string literal (or string parameter) accepted by parseDateTime.
DateBound dateValueOf(const parser::Expr& expr, std::string_view sql, std::span<const ParamValue> params);

}  // namespace sp::routing
