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
#include "parser/dialect.hpp"

namespace sp::parser {

// What one statement may cost. The tree is built iteratively, but the
// planner walks it recursively: without these, `a AND b AND ...` with a
// million terms is a million stack frames deep (docs/configuration.md,
// section `limits`, for the values and why).
struct ParseLimits {
  uint32_t max_nodes = 500'000;      // expression nodes and table references
  uint32_t max_depth = 4'000;        // longest parent-to-child path in the tree
  uint32_t max_in_values = 100'000;  // values in one IN (...) list
};

// Tokens a statement may have under `limits` (every node takes at least one
// token, real statements a few per node): past it parse() refuses it as
// too complex before holding all its tokens.
inline uint64_t maxStatementTokens(const ParseLimits& limits) { return uint64_t(limits.max_nodes) * 4 + 1024; }

enum class ParseErrorKind : uint8_t {
  kSyntax,      // not SQL the parser understands
  kTooComplex,  // over a ParseLimits budget: refuse, never pass on
};

struct ParseError {
  std::string message;  // "expected X at offset N near '...'"
  uint32_t offset = 0;  // byte offset into the query
  ParseErrorKind kind = ParseErrorKind::kSyntax;
};

using ParseResult = std::expected<Statement, ParseError>;

// The dialect decides how the text lexes (sql_mode, client charset, server
// version for /*!NNNNN */) and NOT / || precedence; see dialect.hpp.
ParseResult parse(std::string_view sql, const ParseLimits& limits = {}, const Dialect& dialect = {});
inline ParseResult parse(std::string_view sql, const Dialect& dialect) { return parse(sql, {}, dialect); }

// Compact s-expression of the tree (golden tests, debugging).
std::string toSExpr(const Statement& statement, std::string_view sql);

}  // namespace sp::parser
