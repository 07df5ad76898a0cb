// The text of a literal's value without the parentheses the statement may
// have written around it. The parser widens an expression's range over its
// enclosing parentheses (so range.text(sql) stays valid SQL for the whole
// sub-expression), but `(3)` and `( /* c */ 3 )` are the value 3 to the
// server: whatever reads a literal's value must read it from here.
#pragma once

#include <string_view>

#include "parser/ast.hpp"

namespace sp::parser {

// `e` must be a kLiteral; returns range.text(sql) with enclosing parentheses,
// whitespace and comments removed (the text unchanged when there are none).
std::string_view literalText(const Expr& e, std::string_view sql);

}  // namespace sp::parser
