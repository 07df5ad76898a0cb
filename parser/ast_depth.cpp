#include "parser/ast_depth.hpp"

#include <variant>
#include <vector>

namespace sp::parser {
namespace {

using NodePtr = std::variant<const Expr*, const SelectStatement*, const TableRef*>;

struct Pending {
  NodePtr node;
  size_t depth;
};

// An explicit stack instead of recursion: this runs on trees of any depth.
class DepthScan {
 public:
  size_t deepest() const { return deepest_; }

  void push(const Expr* e, size_t depth) { if (e) stack_.push_back({e, depth}); }
  void push(const SelectStatement* s, size_t depth) { if (s) stack_.push_back({s, depth}); }
  void push(const TableRef* t, size_t depth) { if (t) stack_.push_back({t, depth}); }
  void pushOrder(const std::vector<OrderItem>& items, size_t depth) {
    for (const OrderItem& item : items) push(item.expr.get(), depth);
  }
  void pushLimit(const Limit& limit, size_t depth) {
    push(limit.count.get(), depth);
    push(limit.offset.get(), depth);
  }
  void pushAssignments(const std::vector<Assignment>& list, size_t depth) {
    for (const Assignment& a : list) push(a.value.get(), depth);
  }

  void run() {
    while (!stack_.empty()) {
      const Pending p = stack_.back();
      stack_.pop_back();
      if (p.depth > deepest_) deepest_ = p.depth;
      std::visit([&](auto* node) { expand(*node, p.depth + 1); }, p.node);
    }
  }

 private:
  void expand(const Expr& e, size_t d) {
    for (const ExprPtr& arg : e.args) push(arg.get(), d);
    push(e.case_operand.get(), d);
    push(e.case_else.get(), d);
    push(e.separator.get(), d);
    pushOrder(e.order_by, d);
    for (const ExprPtr& p : e.window_partition) push(p.get(), d);
    pushOrder(e.window_order, d);
    push(e.subquery.get(), d);
  }

  void expand(const SelectStatement& s, size_t d) {
    for (const SelectItem& item : s.items) push(item.expr.get(), d);
    for (const TableRefPtr& ref : s.from) push(ref.get(), d);
    push(s.where.get(), d);
    pushOrder(s.group_by, d);
    push(s.having.get(), d);
    for (const ExprPtr& p : s.window_partition) push(p.get(), d);
    pushOrder(s.window_order, d);
    pushOrder(s.order_by, d);
    pushLimit(s.limit, d);
    for (const UnionBranch& branch : s.unions) push(branch.select.get(), d);
    pushOrder(s.union_order_by, d);
    pushLimit(s.union_limit, d);
  }

  void expand(const TableRef& t, size_t d) {
    push(t.subquery.get(), d);
    push(t.left.get(), d);
    push(t.right.get(), d);
    push(t.on.get(), d);
  }

  std::vector<Pending> stack_;
  size_t deepest_ = 0;
};

}  // namespace

size_t astDepth(const Statement& statement) {
  DepthScan scan;
  scan.push(statement.select.get(), 1);
  if (const InsertStatement* insert = statement.insert.get()) {
    for (const auto& row : insert->rows) {
      for (const ExprPtr& value : row) scan.push(value.get(), 1);
    }
    scan.pushAssignments(insert->set, 1);
    scan.push(insert->select.get(), 1);
    scan.pushAssignments(insert->on_duplicate, 1);
  }
  if (const UpdateStatement* update = statement.update.get()) {
    for (const TableRefPtr& ref : update->tables) scan.push(ref.get(), 1);
    scan.pushAssignments(update->set, 1);
    scan.push(update->where.get(), 1);
    scan.pushOrder(update->order_by, 1);
    scan.pushLimit(update->limit, 1);
  }
  if (const DeleteStatement* del = statement.del.get()) {
    for (const TableRefPtr& ref : del->from) scan.push(ref.get(), 1);
    scan.push(del->where.get(), 1);
    scan.pushOrder(del->order_by, 1);
    scan.pushLimit(del->limit, 1);
  }
  scan.run();
  return scan.deepest();
}

}  // namespace sp::parser
