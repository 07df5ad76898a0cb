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

// Canonical text (no leading zeros, no trailing fraction zeros, "-0" -> "0"):
// equal numbers, equal text. Used for DISTINCT of numbers.
std::string canonical(std::string_view a);

}  // namespace sp::routing::decimal
