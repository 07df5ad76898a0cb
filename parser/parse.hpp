// Recursive-descent parser entry point. See ast.hpp for the tree model.
//
//   auto result = sp::parser::parse(sql);
//   if (!result) { use result.error().message / .offset; }
//   const Statement& stmt = *result;   // string_views point into `sql`
//
// One statement per call; a trailing ';' is allowed, a second statement is
// an error. SELECT / INSERT / REPLACE / UPDATE / DELETE are parsed into a
// tree; every other statement succeeds with Statement::kind set (as
// classify() would) and no body.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "parser/ast.hpp"

namespace sp::parser {

struct ParseError {
  std::string message;  // "expected X at offset N near '...'"
  uint32_t offset = 0;  // byte offset into the query
};

using ParseResult = std::expected<Statement, ParseError>;

ParseResult parse(std::string_view sql);

// Compact s-expression of the tree (golden tests, debugging).
std::string toSExpr(const Statement& statement, std::string_view sql);

}  // namespace sp::parser
