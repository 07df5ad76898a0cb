// Every table name and column reference of a statement, with whether it sits
// in the statement's own query block or nested (subquery, derived table,
// UNION branch). The planner decides from these which tables a statement
// touches; the rewriter edits their byte ranges.
#pragma once
#include <vector>

#include "parser/ast.hpp"

namespace sp::routing {

struct TableUse {
  const parser::TableName* name = nullptr;
  const parser::Identifier* alias = nullptr;  // null for DELETE targets / INSERT table
  bool nested = false;  // inside a subquery, derived table or UNION branch
  const parser::SelectStatement* block = nullptr;  // the SELECT whose FROM names it (null outside SELECTs)
};

struct ColumnUse {
  const parser::ColumnRef* ref = nullptr;
  bool nested = false;
};

struct StatementRefs {
  std::vector<TableUse> tables;
  std::vector<ColumnUse> columns;
};

StatementRefs collectRefs(const parser::Statement& statement);

}  // namespace sp::routing
