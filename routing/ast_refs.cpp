#include "routing/ast_refs.hpp"

namespace sp::routing {
namespace {

using parser::Expr;
using parser::ExprKind;
using parser::SelectStatement;
using parser::TableRef;

class RefCollector {
 public:
  explicit RefCollector(StatementRefs& out) : out_(out) {}

  void expr(const Expr* e, bool nested) {
    if (!e) return;
    if (e->kind == ExprKind::kColumn || (e->kind == ExprKind::kStar && !e->column.table.empty())) {
      out_.columns.push_back({&e->column, nested});
    }
    for (const auto& arg : e->args) expr(arg.get(), nested);
    for (const auto& item : e->order_by) expr(item.expr.get(), nested);
    for (const auto& p : e->window_partition) expr(p.get(), nested);
    for (const auto& item : e->window_order) expr(item.expr.get(), nested);
    expr(e->separator.get(), nested);
    expr(e->case_operand.get(), nested);
    expr(e->case_else.get(), nested);
    if (e->subquery) select(*e->subquery, true);
  }

  void tableRef(const TableRef* ref, bool nested, const SelectStatement* block = nullptr) {
    if (!ref) return;
    switch (ref->kind) {
      case parser::TableRefKind::kTable: out_.tables.push_back({&ref->name, &ref->alias, nested, block}); break;
      case parser::TableRefKind::kDerived:
        if (ref->subquery) select(*ref->subquery, true);
        break;
      case parser::TableRefKind::kJoin:
        tableRef(ref->left.get(), nested, block);
        tableRef(ref->right.get(), nested, block);
        expr(ref->on.get(), nested);
        break;
    }
  }

  void orderItems(const std::vector<parser::OrderItem>& items, bool nested) {
    for (const auto& item : items) expr(item.expr.get(), nested);
  }

  void limit(const parser::Limit& l, bool nested) {
    expr(l.count.get(), nested);
    expr(l.offset.get(), nested);
  }

  void select(const SelectStatement& s, bool nested) {
    bool branches = !s.unions.empty();
    // With UNION every branch, the first included, is a separate block.
    bool block_nested = nested || branches;
    for (const auto& item : s.items) expr(item.expr.get(), block_nested);
    for (const auto& from : s.from) tableRef(from.get(), block_nested, &s);
    expr(s.where.get(), block_nested);
    orderItems(s.group_by, block_nested);
    expr(s.having.get(), block_nested);
    for (const auto& p : s.window_partition) expr(p.get(), block_nested);
    orderItems(s.window_order, block_nested);
    orderItems(s.order_by, block_nested);
    limit(s.limit, block_nested);
    for (const auto& branch : s.unions) {
      if (branch.select) select(*branch.select, true);
    }
    orderItems(s.union_order_by, nested);
    limit(s.union_limit, nested);
  }

  void assignments(const std::vector<parser::Assignment>& list, bool nested) {
    for (const auto& a : list) {
      out_.columns.push_back({&a.column, nested});
      expr(a.value.get(), nested);
    }
  }

  void statement(const parser::Statement& st) {
    if (st.select) select(*st.select, false);
    if (const auto* ins = st.insert.get()) {
      out_.tables.push_back({&ins->table, nullptr, false});
      for (const auto& row : ins->rows) {
        for (const auto& value : row) expr(value.get(), false);
      }
      assignments(ins->set, false);
      if (ins->select) select(*ins->select, true);
      assignments(ins->on_duplicate, false);
    }
    if (const auto* up = st.update.get()) {
      for (const auto& t : up->tables) tableRef(t.get(), false);
      assignments(up->set, false);
      expr(up->where.get(), false);
      orderItems(up->order_by, false);
      limit(up->limit, false);
    }
    if (const auto* del = st.del.get()) {
      for (const auto& t : del->targets) out_.tables.push_back({&t, nullptr, false});
      for (const auto& t : del->from) tableRef(t.get(), false);
      expr(del->where.get(), false);
      orderItems(del->order_by, false);
      limit(del->limit, false);
    }
  }

 private:
  StatementRefs& out_;
};

}  // namespace

StatementRefs collectRefs(const parser::Statement& statement) {
  StatementRefs refs;
  RefCollector(refs).statement(statement);
  return refs;
}

}  // namespace sp::routing
