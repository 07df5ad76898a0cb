// Generic traversal of a parsed Statement, for the planner and rewriter:
// e.g. collect every table reference (including those in subqueries) to
// rewrite `orders` -> `orders_03`, or every column to check sharding keys.
#pragma once
#include <functional>

#include "parser/ast.hpp"

namespace sp::parser {

struct AstVisitor {
  // Every expression node, parents before children, including expressions in
  // subqueries, join conditions, LIMIT, ORDER BY, INSERT rows and SET lists.
  std::function<void(const Expr&)> on_expr;
  // Every kTable / kDerived / kJoin reference, in FROM lists, UPDATE table
  // lists and DELETE FROM/USING lists, including those inside subqueries.
  std::function<void(const TableRef&)> on_table_ref;
  // Every table name that is not inside a TableRef: INSERT INTO t, DELETE
  // targets (DELETE t1 FROM ...).
  std::function<void(const TableName&)> on_table_name;
};

void walk(const Statement& statement, const AstVisitor& visitor);
void walk(const SelectStatement& select, const AstVisitor& visitor);
void walk(const Expr& expr, const AstVisitor& visitor);

}  // namespace sp::parser
