// Depth of a parsed statement: the longest path from the statement down to a
// node (expressions, subqueries, table references). Computed without
// recursion, so it is safe on any tree; the parser refuses statements deeper
// than ParseLimits::max_depth, which bounds every recursive walk after it.
#pragma once
#include <cstddef>

#include "parser/ast.hpp"

namespace sp::parser {

size_t astDepth(const Statement& statement);

}  // namespace sp::parser
