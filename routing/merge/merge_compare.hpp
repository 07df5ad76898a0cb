// How the merger orders and groups values of one column, as the server
// would: numbers (integers, DECIMAL) numerically and exactly, FLOAT/DOUBLE
// as doubles, strings under the column's collation (binary collations by
// bytes, the others case-insensitively with trailing spaces ignored, as
// utf8mb4_general_ci does), DATE/DATETIME/TIMESTAMP and TIME as instants
// and durations (negative TIMEs first, 100:00:00 after 99:00:00). NULL sorts
// before every value.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "protocol/resultset.hpp"

namespace sp::routing {

enum class ValueClass : uint8_t { kExact, kFloat, kBinary, kText, kDatetime, kTime };

ValueClass classify(const protocol::ColumnDefinition41& column);

// <0, 0, >0 (NULL first).
int compareValues(ValueClass cls, const std::optional<std::string_view>& a, const std::optional<std::string_view>& b);

// A key equal for values that compare equal (GROUP BY / DISTINCT); NULL has its own key.
std::string groupKey(ValueClass cls, const std::optional<std::string_view>& value);

}  // namespace sp::routing

namespace sp::routing {

// Appends to `key` bytes whose memcmp order is compareValues' order
// (reversed when `descending`); keys of several columns concatenate. Built
// once per row, so the merge sort compares with memcmp only.
void appendSortKey(ValueClass cls, const std::optional<std::string_view>& value, bool descending, std::string& key);

}  // namespace sp::routing
