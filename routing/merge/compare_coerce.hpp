// MariaDB's comparison of a value with a literal of another type, for what
// the proxy evaluates itself (HAVING on merged groups), and the temporal
// values the merger orders (MIN/MAX, ORDER BY). Rules checked against a
// real MariaDB 10.11 (sql_mode default, utf8mb4_general_ci):
//   number   vs number  : exactly, as decimals (integer and DECIMAL literals)
//   string   vs number  : as DOUBLE (the string's numeric prefix: 'audio' = 0, '12abc' = 12)
//   number   vs string  : as DOUBLE
//   DATE/DATETIME/TIMESTAMP vs string or number: as DATETIME, the literal
//              converted ('2025-03-01' = '2025-03-01 00:00:00.000', 20250301 =
//              2025-03-01); a literal that does not convert is the zero
//              datetime 0000-00-00 00:00:00 ('garbage', '2025-03', 50)
//   TIME     vs string or number: as TIME ('-01:00:00' < '00:00:00', 100 = 00:01:00)
//   string   vs string  : the column's collation (merge_compare.hpp)
// FLOAT literals are refused by the planner: MariaDB compares an integer
// aggregate with 1.8e19 through a 15-digit decimal, which is not worth
// modelling.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "parser/ast.hpp"
#include "routing/merge/merge_compare.hpp"
#include "routing/merge/merge_spec.hpp"

namespace sp::routing {

// A temporal value as one ordered integer: DATETIME packs
// Y,M,D,h,m,s,us so integer order is calendar order (DATE = midnight);
// TIME is signed microseconds.
namespace temporal {

// The server's own text of a DATE / DATETIME / TIMESTAMP value ("2025-03-01",
// "2025-03-01 10:00:00.500"); nullopt when it is not in that form.
std::optional<int64_t> parseDatetime(std::string_view text);
// The server's text of a TIME value ("-838:59:59.000000").
std::optional<int64_t> parseTime(std::string_view text);

// A string literal converted to DATETIME as the server does in a comparison:
// delimited ('2025-3-1 1:2:3.5', '2025/03/01T10:00', trailing text ignored)
// or digits only (YYMMDD, YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss); day up to
// 31 in any month; anything else is the zero datetime.
int64_t datetimeFromString(std::string_view text);
// A numeric literal (integer or decimal text) converted to DATETIME:
// YYMMDD, YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss[.frac]; else zero.
int64_t datetimeFromNumber(std::string_view text);
// TIME from a string ('[-][D ]h:m[:s[.f]]' or digits [h]hmmss) or a number (hhmmss[.frac]).
int64_t timeFromString(std::string_view text);
int64_t timeFromNumber(std::string_view text);

}  // namespace temporal

// The numeric value of a string as the server reads it in a DOUBLE context:
// leading spaces, then the longest [+-]digits[.digits][e[+-]digits] prefix; 0
// when there is none (no hex, no inf/nan).
double stringToDouble(std::string_view text);

// value <op> literal for a non-NULL value of class `cls`: <0, 0, >0.
int compareWithLiteral(ValueClass cls, std::string_view value, LiteralType type, std::string_view literal);

// How a HAVING literal of the client's SQL reaches the merger, or why the
// proxy cannot evaluate it exactly (the caller refuses the query).
struct HavingLiteral {
  LiteralType type = LiteralType::kExact;
  std::optional<std::string> text;  // nullopt: NULL
};
std::expected<HavingLiteral, std::string> havingLiteral(const parser::Expr& literal, std::string_view sql);

}  // namespace sp::routing
