// Exact decimal arithmetic on the text form MySQL prints ("-123.4500"):
// SUM of integers and DECIMALs must be exact, so no double on the way.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sp::routing::decimal {

// Whether `text` is [-+]digits[.digits] (at least one digit).
bool isDecimal(std::string_view text);

// a + b, keeping the larger scale of the two ("1.50" + "2" = "3.50").
// nullopt when either is not a decimal.
std::optional<std::string> add(std::string_view a, std::string_view b);

// Numeric order: <0, 0, >0. Both must be decimals.
int compare(std::string_view a, std::string_view b);

// a / b rounded half away from zero to `scale` digits after the point (as
// MySQL's decimal division rounds); b must be a non-zero integer >= 1.
std::optional<std::string> divide(std::string_view a, uint64_t b, uint32_t scale);

// -a.
std::optional<std::string> negate(std::string_view a);

// a * b, exact, at the scale of a plus the scale of b (as MariaDB's DECIMAL
// multiplication).
std::optional<std::string> multiply(std::string_view a, std::string_view b);

// a / b for any non-zero decimal b whose digits fit 64 bits, rounded half away
// from zero to `scale` digits. nullopt when b is zero or too long.
std::optional<std::string> divideBy(std::string_view a, std::string_view b, uint32_t scale);

// a rounded half away from zero to `scale` digits (padded with zeros when it
// has fewer): "2.345" at 2 -> "2.35", "2" at 2 -> "2.00".
std::optional<std::string> rescale(std::string_view a, uint32_t scale);

// Digits after the point as written ("1.50" -> 2, "7" -> 0).
uint32_t scaleOf(std::string_view a);

// Canonical text (no leading zeros, no trailing fraction zeros, "-0" -> "0"):
// equal numbers, equal text. Used for DISTINCT of numbers.
std::string canonical(std::string_view a);

}  // namespace sp::routing::decimal
