// toSExpr: compact, deterministic rendering of the AST for golden tests.
// Names print as their source text (backticks included) so the goldens also
// pin the byte ranges the rewriter relies on.
#include <iterator>
#include <string>

#include "parser/parse.hpp"

namespace sp::parser {
namespace {

// A switch, not a table indexed by the enum: a kind added to the enum cannot
// shift the names or read past the end (kOther once did).
std::string_view statementKindName(StatementKind kind) {
  using K = StatementKind;
  switch (kind) {
    case K::kEmpty: return "empty";
    case K::kSelect: return "select";
    case K::kInsert: return "insert";
    case K::kReplace: return "replace";
    case K::kUpdate: return "update";
    case K::kDelete: return "delete";
    case K::kSet: return "set";
    case K::kUse: return "use";
    case K::kBegin: return "begin";
    case K::kXa: return "xa";
    case K::kCommit: return "commit";
    case K::kRollback: return "rollback";
    case K::kSavepoint: return "savepoint";
    case K::kLockTables: return "lock-tables";
    case K::kUnlockTables: return "unlock-tables";
    case K::kShow: return "show";
    case K::kExplain: return "explain";
    case K::kDdl: return "ddl";
    case K::kPrepareSql: return "prepare";
    case K::kExecuteSql: return "execute";
    case K::kDeallocateSql: return "deallocate";
    case K::kCall: return "call";
    case K::kDo: return "do";
    case K::kKill: return "kill";
    case K::kOther: return "other";
  }
  return "other";
}

std::string_view binaryOpName(BinaryOp op) {
  static constexpr std::string_view kNames[] = {
      "or", "xor", "and", "=", "<=>", "<>", "<", "<=", ">", ">=", "regexp", "|", "&", "<<", ">>",
      "+", "-", "*", "/", "div", "mod", "^", ":=", "->", "->>", "concat"};
  return kNames[static_cast<size_t>(op)];
}

std::string_view unaryOpName(UnaryOp op) {
  static constexpr std::string_view kNames[] = {"not", "neg", "plus", "~", "!", "binary"};
  return kNames[static_cast<size_t>(op)];
}

std::string_view literalPrefix(LiteralKind kind) {
  static constexpr std::string_view kNames[] = {"int:", "dec:", "float:", "str:", "hex:",
                                                "bit:", "",     "",       "",     ""};
  return kNames[static_cast<size_t>(kind)];
}

std::string_view joinName(JoinKind kind) {
  static constexpr std::string_view kNames[] = {"join",  "left-join",    "right-join",
                                                "cross-join", "straight-join", "natural-join",
                                                "natural-left-join", "natural-right-join"};
  return kNames[static_cast<size_t>(kind)];
}

class Printer {
 public:
  explicit Printer(std::string_view sql) : sql_(sql) {}
  std::string take() { return std::move(out_); }

  void statement(const Statement& s) {
    out_ += "(" + std::string(statementKindName(s.kind));
    if (s.placeholder_count > 0) out_ += " ?" + std::to_string(s.placeholder_count);
    if (s.select) select(*s.select);
    if (s.insert) insert(*s.insert);
    if (s.update) update(*s.update);
    if (s.del) del(*s.del);
    out_ += ")";
  }

 private:
  void open(std::string_view name) { out_ += " ("; out_ += name; }
  void close() { out_ += ")"; }
  void word(std::string_view text) { out_ += ' '; out_ += text; }
  void text(SourceRange range) { word(range.text(sql_)); }

  void qualified(const Identifier& db, const Identifier& table, const Identifier& last) {
    std::string name;
    if (!db.empty()) name += std::string(db.range.text(sql_)) + ".";
    if (!table.empty()) name += std::string(table.range.text(sql_)) + ".";
    name += last.empty() ? std::string("*") : std::string(last.range.text(sql_));
    word(name);
  }

  void exprList(std::string_view name, const std::vector<ExprPtr>& list, size_t first = 0) {
    open(name);
    for (size_t i = first; i < list.size(); ++i) expr(*list[i]);
    close();
  }

  void orderList(std::string_view name, const std::vector<OrderItem>& items) {
    if (items.empty()) return;
    open(name);
    for (const OrderItem& item : items) {
      expr(*item.expr);
      if (item.explicit_direction) word(item.descending ? "desc" : "asc");
    }
    close();
  }

  void limit(const Limit& l, std::string_view name = "limit") {
    if (!l.count) return;
    open(name);
    expr(*l.count);
    if (l.offset) {
      word("offset");
      expr(*l.offset);
    }
    close();
  }

  void expr(const Expr& e);
  void exprSpecial(const Expr& e);
  void select(const SelectStatement& s);
  void tableRef(const TableRef& t);
  void insert(const InsertStatement& s);
  void update(const UpdateStatement& s);
  void del(const DeleteStatement& s);
  void assignments(std::string_view name, const std::vector<Assignment>& list);

  std::string_view sql_;
  std::string out_;
};

void Printer::expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      if (e.literal_kind == LiteralKind::kPlaceholder) {
        word("?" + std::to_string(e.placeholder_index));
      } else {
        word(std::string(literalPrefix(e.literal_kind)) + std::string(e.range.text(sql_)));
      }
      return;
    case ExprKind::kColumn: return qualified(e.column.db, e.column.table, e.column.column);
    case ExprKind::kStar: return qualified(e.column.db, e.column.table, Identifier{});
    case ExprKind::kUserVariable: case ExprKind::kSystemVariable: return word(e.name);
    case ExprKind::kDefault: return word("DEFAULT");
    case ExprKind::kUnary: open(unaryOpName(e.unary_op)); expr(*e.args[0]); return close();
    case ExprKind::kBinary:
      open(std::string(e.negated ? "not-" : "") + std::string(binaryOpName(e.binary_op)));
      expr(*e.args[0]);
      expr(*e.args[1]);
      return close();
    case ExprKind::kIsTest: {
      static constexpr std::string_view kValues[] = {"null", "true", "false", "unknown"};
      open(std::string(e.negated ? "is-not-" : "is-") +
           std::string(kValues[static_cast<size_t>(e.is_value)]));
      expr(*e.args[0]);
      return close();
    }
    default: return exprSpecial(e);
  }
}

void Printer::exprSpecial(const Expr& e) {
  const std::string neg = e.negated ? "not-" : "";
  switch (e.kind) {
    case ExprKind::kIn:
      open(neg + "in");
      expr(*e.args[0]);
      if (e.subquery) select(*e.subquery);
      else exprList("list", e.args, 1);
      return close();
    case ExprKind::kBetween: return exprList(neg + "between", e.args);
    case ExprKind::kLike: return exprList(neg + "like", e.args);
    case ExprKind::kFunction:
      open("call");
      word(e.name);
      if (e.distinct) word("distinct");
      if (e.star) word("*");
      for (const ExprPtr& arg : e.args) expr(*arg);
      orderList("order-by", e.order_by);
      if (e.separator) { open("separator"); expr(*e.separator); close(); }
      return close();
    case ExprKind::kCase:
      open("case");
      if (e.case_operand) expr(*e.case_operand);
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        open("when"); expr(*e.args[i]); expr(*e.args[i + 1]); close();
      }
      if (e.case_else) { open("else"); expr(*e.case_else); close(); }
      return close();
    case ExprKind::kCast:
      open(e.using_charset ? "convert-using" : "cast");
      expr(*e.args[0]);
      word("\"" + std::string(e.name) + "\"");
      return close();
    case ExprKind::kInterval: open("interval"); expr(*e.args[0]); word(e.name); return close();
    case ExprKind::kRow: return exprList("row", e.args);
    case ExprKind::kSubquery: open("subquery"); select(*e.subquery); return close();
    case ExprKind::kExists: open(neg + "exists"); select(*e.subquery); return close();
    case ExprKind::kCollate: open("collate"); expr(*e.args[0]); word(e.name); return close();
    default: word("<?>"); return;
  }
}

void Printer::select(const SelectStatement& s) {
  open("select");
  if (s.distinct) word("distinct");
  if (s.sql_calc_found_rows) word("calc-found-rows");
  open("items");
  for (const SelectItem& item : s.items) {
    if (item.alias.empty()) {
      expr(*item.expr);
    } else {
      open("as"); expr(*item.expr); text(item.alias.range); close();
    }
  }
  close();
  if (!s.into.empty()) { open("into"); text(s.into); close(); }
  if (!s.from.empty()) {
    open("from");
    for (const TableRefPtr& ref : s.from) tableRef(*ref);
    close();
  }
  if (s.where) { open("where"); expr(*s.where); close(); }
  orderList("group-by", s.group_by);
  if (s.with_rollup) word("rollup");
  if (s.having) { open("having"); expr(*s.having); close(); }
  orderList("order-by", s.order_by);
  limit(s.limit);
  static constexpr std::string_view kLocks[] = {"", "for-update", "for-share", "lock-in-share-mode"};
  if (s.lock != LockMode::kNone) word(kLocks[static_cast<size_t>(s.lock)]);
  for (const UnionBranch& branch : s.unions) {
    open(branch.all ? "union-all" : "union");
    select(*branch.select);
    close();
  }
  orderList("union-order-by", s.union_order_by);
  limit(s.union_limit, "union-limit");
  close();
}

void Printer::tableRef(const TableRef& t) {
  switch (t.kind) {
    case TableRefKind::kTable:
      open("table");
      qualified(Identifier{}, t.name.db, t.name.table);
      break;
    case TableRefKind::kDerived:
      open("derived");
      select(*t.subquery);
      break;
    case TableRefKind::kJoin:
      open(joinName(t.join));
      tableRef(*t.left);
      tableRef(*t.right);
      if (t.on) { open("on"); expr(*t.on); close(); }
      if (!t.using_columns.empty()) {
        open("using");
        for (const Identifier& id : t.using_columns) text(id.range);
        close();
      }
      return close();
  }
  if (!t.alias.empty()) { word("as"); text(t.alias.range); }
  close();
}

void Printer::assignments(std::string_view name, const std::vector<Assignment>& list) {
  if (list.empty()) return;
  open(name);
  for (const Assignment& a : list) {
    open("=");
    qualified(a.column.db, a.column.table, a.column.column);
    expr(*a.value);
    close();
  }
  close();
}

void Printer::insert(const InsertStatement& s) {
  open(s.replace ? "replace" : "insert");
  if (s.ignore) word("ignore");
  qualified(Identifier{}, s.table.db, s.table.table);
  if (!s.columns.empty()) {
    open("columns");
    for (const Identifier& id : s.columns) text(id.range);
    close();
  }
  if (!s.rows.empty()) {
    open("values");
    for (const auto& row : s.rows) exprList("row", row);
    close();
  }
  if (!s.alias.empty()) { word("as"); text(s.alias.range); }
  assignments("set", s.set);
  if (s.select) select(*s.select);
  assignments("on-duplicate", s.on_duplicate);
  close();
}

void Printer::update(const UpdateStatement& s) {
  open("update");
  if (s.ignore) word("ignore");
  for (const TableRefPtr& ref : s.tables) tableRef(*ref);
  assignments("set", s.set);
  if (s.where) { open("where"); expr(*s.where); close(); }
  orderList("order-by", s.order_by);
  limit(s.limit);
  close();
}

void Printer::del(const DeleteStatement& s) {
  open("delete");
  if (s.ignore) word("ignore");
  if (!s.targets.empty()) {
    open("targets");
    for (const TableName& name : s.targets) qualified(Identifier{}, name.db, name.table);
    close();
  }
  open("from");
  for (const TableRefPtr& ref : s.from) tableRef(*ref);
  close();
  if (s.where) { open("where"); expr(*s.where); close(); }
  orderList("order-by", s.order_by);
  limit(s.limit);
  close();
}

}  // namespace

std::string toSExpr(const Statement& statement, std::string_view sql) {
  Printer printer(sql);
  printer.statement(statement);
  return printer.take();
}

}  // namespace sp::parser
