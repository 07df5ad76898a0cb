// Evaluation of a ComputedExpr (routing/merge/merge_spec.hpp) over one merged row:
// select items such as COUNT(*) * 2 or SUM(x) / COUNT(*) across shards.
#pragma once
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "protocol/resultset.hpp"
#include "routing/merge/merge_compare.hpp"
#include "routing/merge/merge_spec.hpp"

namespace sp::routing {

using MergedRow = std::vector<std::optional<std::string>>;

// The value of `expr` for `row`, formatted as `result` (the column the shards
// described for the same expression: its type and decimals are the server's).
// Exact decimal arithmetic: an operand that is not an exact number (a
// floating-point, text or temporal value), or a result type other than an
// integer or DECIMAL, is an error naming the expression, never a guess.
// `classes` has the value class of every merged column (only exact numbers
// may be computed with).
std::expected<std::optional<std::string>, std::string> evaluateComputed(
    const ComputedExpr& expr, const MergedRow& row, const std::vector<ValueClass>& classes,
    const protocol::ColumnDefinition41& result);

}  // namespace sp::routing
