// Destructors of the AST nodes that can form long chains. The default
// destructors would recurse once per level, and the parser builds operator
// chains and join chains in loops, so their depth is only bounded by
// ParseLimits: these unlink the children onto a heap stack instead.
#include "parser/ast.hpp"

namespace sp::parser {
namespace {

void take(ExprPtr& child, std::vector<ExprPtr>& out) {
  if (child) out.push_back(std::move(child));
}

// Moves every child expression of `e` onto `out`, leaving `e` without any.
void detachChildren(Expr& e, std::vector<ExprPtr>& out) {
  for (ExprPtr& arg : e.args) take(arg, out);
  e.args.clear();
  take(e.case_operand, out);
  take(e.case_else, out);
  take(e.separator, out);
  for (OrderItem& item : e.order_by) take(item.expr, out);
  for (ExprPtr& p : e.window_partition) take(p, out);
  for (OrderItem& item : e.window_order) take(item.expr, out);
}

bool isLeaf(const Expr& e) {
  return e.args.empty() && !e.case_operand && !e.case_else && !e.separator && e.order_by.empty() &&
         e.window_partition.empty() && e.window_order.empty();
}

}  // namespace

Expr::~Expr() {
  if (isLeaf(*this)) return;  // most nodes: nothing to unlink
  std::vector<ExprPtr> pending;
  detachChildren(*this, pending);
  while (!pending.empty()) {
    ExprPtr next = std::move(pending.back());
    pending.pop_back();
    detachChildren(*next, pending);
    // `next` dies here without children, so its destructor does not recurse.
  }
}

TableRef::~TableRef() {
  std::vector<TableRefPtr> pending;
  if (left) pending.push_back(std::move(left));
  if (right) pending.push_back(std::move(right));
  while (!pending.empty()) {
    TableRefPtr next = std::move(pending.back());
    pending.pop_back();
    if (next->left) pending.push_back(std::move(next->left));
    if (next->right) pending.push_back(std::move(next->right));
  }
}

}  // namespace sp::parser
