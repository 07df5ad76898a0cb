#include "parser/ast_walk.hpp"

namespace sp::parser {
namespace {

void walkOrder(const std::vector<OrderItem>& items, const AstVisitor& visitor) {
  for (const OrderItem& item : items) walk(*item.expr, visitor);
}

void walkLimit(const Limit& limit, const AstVisitor& visitor) {
  if (limit.offset) walk(*limit.offset, visitor);
  if (limit.count) walk(*limit.count, visitor);
}

void walkTableRef(const TableRef& ref, const AstVisitor& visitor) {
  if (visitor.on_table_ref) visitor.on_table_ref(ref);
  if (ref.subquery) walk(*ref.subquery, visitor);
  if (ref.left) walkTableRef(*ref.left, visitor);
  if (ref.right) walkTableRef(*ref.right, visitor);
  if (ref.on) walk(*ref.on, visitor);
}

void walkAssignments(const std::vector<Assignment>& list, const AstVisitor& visitor) {
  for (const Assignment& a : list) walk(*a.value, visitor);
}

}  // namespace

void walk(const Expr& expr, const AstVisitor& visitor) {
  if (visitor.on_expr) visitor.on_expr(expr);
  if (expr.case_operand) walk(*expr.case_operand, visitor);
  for (const ExprPtr& arg : expr.args) walk(*arg, visitor);
  if (expr.case_else) walk(*expr.case_else, visitor);
  walkOrder(expr.order_by, visitor);
  for (const ExprPtr& p : expr.window_partition) walk(*p, visitor);
  walkOrder(expr.window_order, visitor);
  if (expr.separator) walk(*expr.separator, visitor);
  if (expr.subquery) walk(*expr.subquery, visitor);
}

void walk(const SelectStatement& select, const AstVisitor& visitor) {
  for (const SelectItem& item : select.items) walk(*item.expr, visitor);
  for (const TableRefPtr& ref : select.from) walkTableRef(*ref, visitor);
  if (select.where) walk(*select.where, visitor);
  walkOrder(select.group_by, visitor);
  if (select.having) walk(*select.having, visitor);
  for (const ExprPtr& p : select.window_partition) walk(*p, visitor);
  walkOrder(select.window_order, visitor);
  walkOrder(select.order_by, visitor);
  walkLimit(select.limit, visitor);
  for (const UnionBranch& branch : select.unions) walk(*branch.select, visitor);
  walkOrder(select.union_order_by, visitor);
  walkLimit(select.union_limit, visitor);
}

void walk(const Statement& statement, const AstVisitor& visitor) {
  if (statement.select) walk(*statement.select, visitor);
  if (const InsertStatement* insert = statement.insert.get()) {
    if (visitor.on_table_name) visitor.on_table_name(insert->table);
    for (const auto& row : insert->rows) {
      for (const ExprPtr& value : row) walk(*value, visitor);
    }
    walkAssignments(insert->set, visitor);
    if (insert->select) walk(*insert->select, visitor);
    walkAssignments(insert->on_duplicate, visitor);
  }
  if (const UpdateStatement* update = statement.update.get()) {
    for (const TableRefPtr& ref : update->tables) walkTableRef(*ref, visitor);
    walkAssignments(update->set, visitor);
    if (update->where) walk(*update->where, visitor);
    walkOrder(update->order_by, visitor);
    walkLimit(update->limit, visitor);
  }
  if (const DeleteStatement* del = statement.del.get()) {
    if (visitor.on_table_name) {
      for (const TableName& name : del->targets) visitor.on_table_name(name);
    }
    for (const TableRefPtr& ref : del->from) walkTableRef(*ref, visitor);
    if (del->where) walk(*del->where, visitor);
    walkOrder(del->order_by, visitor);
    walkLimit(del->limit, visitor);
  }
}

}  // namespace sp::parser
