// AST produced by parse() (parser/parse.hpp) for the statements applications
// send through the proxy: SELECT, INSERT/REPLACE, UPDATE, DELETE. Every
// other statement is recognised by kind only (Statement::kind, no body).
//
// Model for the routing planner / rewriter:
//  - Nothing is copied from the query: names and texts are std::string_view
//    into the original SQL, so the SQL buffer must outlive the Statement.
//  - Every node records the source byte range [begin, end) it came from.
//    Expression ranges include any parentheses written around them, so
//    range.text(sql) is always valid SQL for that sub-expression.
//  - Identifier::range covers the name token INCLUDING backticks, so a
//    rewriter replaces `range` byte-for-byte in the original text
//    (`orders` -> `orders_03`, msg.seq -> msg_03.seq).
//  - TableName records db and table parts separately; ColumnRef records its
//    qualifier (table, and db when written) separately from the column.
//  - Literals keep their kind and exact source text; `?` placeholders are
//    numbered 0, 1, 2... in order of appearance in the text.
//  - Nodes are owned by std::unique_ptr; a Statement is movable. Expr and
//    TableRef are destroyed without recursion, whatever the tree's depth.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "parser/classify.hpp"

namespace sp::parser {

struct SourceRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  bool empty() const { return begin == end; }
  std::string_view text(std::string_view sql) const { return sql.substr(begin, end - begin); }
};

// A (possibly absent) name. value is the text without backticks; a doubled
// backtick inside stays doubled (use unquoteIdentifier(range.text(sql)) for
// the exact value of such a name).
struct Identifier {
  SourceRange range;       // token bytes including backticks; empty when absent
  std::string_view value;  // name as written, backticks stripped
  bool quoted = false;
  bool empty() const { return range.empty(); }
};

// [db.]table
struct TableName {
  Identifier db;      // empty when not written
  Identifier table;
  SourceRange range;  // from the db part (or table) to the end of the table part
};

// [[db.]table.]column
struct ColumnRef {
  Identifier db;      // only with a table qualifier: db.t.c
  Identifier table;   // qualifier (table name or alias); empty when unqualified
  Identifier column;
};

struct Expr;
struct SelectStatement;
using ExprPtr = std::unique_ptr<Expr>;
using SelectPtr = std::unique_ptr<SelectStatement>;

enum class ExprKind : uint8_t {
  kLiteral,         // literal_kind, placeholder_index; value text = literalText(e, sql) (literal_text.hpp)
  kColumn,          // column
  kStar,            // `*` or `t.*` / `db.t.*` in a select list (qualifier in column.db/table)
  kUserVariable,    // @name  (name = token text including '@')
  kSystemVariable,  // @@[scope.]name (name = token text)
  kDefault,         // DEFAULT (INSERT values / SET c = DEFAULT)
  kUnary,           // unary_op args[0]
  kBinary,          // args[0] binary_op args[1]; negated only for NOT REGEXP
  kIsTest,          // args[0] IS [NOT] is_value
  kIn,              // args[0] [NOT] IN (args[1..]) or IN (subquery)
  kBetween,         // args[0] [NOT] BETWEEN args[1] AND args[2]
  kLike,            // args[0] [NOT] LIKE args[1] [ESCAPE args[2]]
  kFunction,        // name(args) ; distinct, star (COUNT(*)), order_by/separator (GROUP_CONCAT).
                    // EXTRACT(u FROM x), TRIM([LEADING..] r FROM s), SUBSTRING(s FROM a FOR b),
                    // POSITION(a IN b): args are the expressions in source order; the
                    // keywords/unit are only in the text. CURRENT_TIMESTAMP etc: no args.
  kCase,            // CASE [case_operand] WHEN args[0] THEN args[1] ... [ELSE case_else] END
  kCast,            // CAST(args[0] AS type_text) / CONVERT(args[0], type_text) / CONVERT(x USING cs)
  kInterval,        // INTERVAL args[0] unit   (unit = "DAY", "MONTH", "DAY_HOUR"...)
  kRow,             // (args[0], args[1], ...) row constructor, also ROW(...)
  kSubquery,        // (SELECT ...) scalar subquery: subquery
  kExists,          // [NOT] EXISTS (subquery)
  kCollate,         // args[0] COLLATE name
};

enum class LiteralKind : uint8_t {
  kInteger, kDecimal, kFloat, kString, kHex, kBit, kNull, kTrue, kFalse, kPlaceholder,
};
// Literal text notes: kInteger/kDecimal/kFloat may start with '-' (a minus
// written directly before the number is folded in). kString text may hold a
// charset introducer (_utf8mb4'x', _utf8mb4 'x', N'x'), a type word
// (DATE '2024-01-01', TIME '..', TIMESTAMP '..') or adjacent strings
// ('a' 'b'); unquoteString(literalText(e, sql)) gives the value in every case
// (range.text(sql) also holds the parentheses written around the literal).

enum class UnaryOp : uint8_t { kNot, kNegate, kPlus, kBitNot, kBang, kBinary };

enum class BinaryOp : uint8_t {
  kOr, kXor, kAnd,
  kEq, kNullSafeEq, kNe, kLt, kLe, kGt, kGe, kRegexp,
  kBitOr, kBitAnd, kShiftLeft, kShiftRight,
  kAdd, kSub, kMul, kDiv, kIntDiv, kMod, kBitXor,
  kAssign,            // @v := expr
  kJsonExtract,       // ->
  kJsonUnquote,       // ->>
  kConcat,            // || under sql_mode PIPES_AS_CONCAT (binds tighter than ^)
};

enum class IsValue : uint8_t { kNull, kTrue, kFalse, kUnknown };

struct OrderItem {
  ExprPtr expr;             // a kLiteral kInteger here is a column position (ORDER BY 2)
  bool descending = false;
  bool explicit_direction = false;  // ASC/DESC written
  SourceRange range;
};

// One fat node type instead of a class hierarchy: the planner walks `args`
// generically (e.g. to find every column) and switches on `kind` when it
// needs meaning. Fields unused by a kind stay default.
struct Expr {
  Expr() = default;
  Expr(Expr&&) = default;
  Expr& operator=(Expr&&) = default;
  // Iterative: a left-deep chain of a million ANDs must not take a million
  // nested destructor calls (parser/ast.cpp).
  ~Expr();

  ExprKind kind = ExprKind::kLiteral;
  SourceRange range;
  std::vector<ExprPtr> args;

  LiteralKind literal_kind = LiteralKind::kNull;
  uint32_t placeholder_index = 0;   // kLiteral kPlaceholder: 0-based order in the query
  UnaryOp unary_op = UnaryOp::kNot;
  BinaryOp binary_op = BinaryOp::kEq;
  IsValue is_value = IsValue::kNull;
  bool negated = false;             // NOT IN / NOT BETWEEN / NOT LIKE / IS NOT / NOT EXISTS / NOT REGEXP

  ColumnRef column;                 // kColumn, kStar (qualifier only)
  std::string_view name;            // kFunction name as written; kUserVariable/kSystemVariable text;
                                    // kInterval unit; kCast type text; kCollate collation
  bool distinct = false;            // kFunction: COUNT(DISTINCT x)
  bool star = false;                // kFunction: COUNT(*)
  bool using_charset = false;       // kCast: CONVERT(x USING cs) (name = charset)
  std::vector<OrderItem> order_by;  // kFunction GROUP_CONCAT(... ORDER BY ...)
  ExprPtr separator;                // kFunction GROUP_CONCAT(... SEPARATOR 'x')
  // kFunction with OVER: a window function. OVER (PARTITION BY .. ORDER BY ..
  // [frame]) fills window_partition / window_order (the frame stays in the
  // text only); OVER name refers to the SELECT's WINDOW clause.
  bool window = false;
  std::vector<ExprPtr> window_partition;
  std::vector<OrderItem> window_order;
  ExprPtr case_operand;             // kCase: CASE operand WHEN ...
  ExprPtr case_else;                // kCase: ELSE
  SelectPtr subquery;               // kSubquery, kExists, kIn with a subquery
};

struct SelectItem {
  ExprPtr expr;       // kStar for * and t.*
  Identifier alias;   // empty when none
  SourceRange range;  // expression through alias
};

enum class JoinKind : uint8_t { kInner, kLeft, kRight, kCross, kStraight, kNaturalInner, kNaturalLeft, kNaturalRight };
enum class TableRefKind : uint8_t { kTable, kDerived, kJoin };

struct TableRef;
using TableRefPtr = std::unique_ptr<TableRef>;

struct TableRef {
  TableRef() = default;
  TableRef(TableRef&&) = default;
  TableRef& operator=(TableRef&&) = default;
  ~TableRef();  // iterative over join chains, like ~Expr

  TableRefKind kind = TableRefKind::kTable;
  SourceRange range;
  TableName name;         // kTable
  SelectPtr subquery;     // kDerived: (SELECT ...) alias
  Identifier alias;       // kTable / kDerived; empty when none
  // kJoin: left JOIN right [ON on | USING (using_columns)]
  JoinKind join = JoinKind::kInner;
  TableRefPtr left;
  TableRefPtr right;
  ExprPtr on;
  std::vector<Identifier> using_columns;
};

struct Limit {
  ExprPtr count;   // integer literal or placeholder
  ExprPtr offset;  // null when not written; LIMIT m,n and LIMIT n OFFSET m both fill it
  SourceRange range;  // from LIMIT to the end of the clause
};

enum class LockMode : uint8_t { kNone, kForUpdate, kForShare, kLockInShareMode };

struct UnionBranch;

// One query block, plus the UNION branches that follow it.
struct SelectStatement {
  SourceRange range;
  bool distinct = false;
  bool sql_calc_found_rows = false;
  std::vector<SelectItem> items;
  std::vector<TableRefPtr> from;   // comma-separated list; each entry may be a join tree
  ExprPtr where;
  std::vector<OrderItem> group_by;
  bool with_rollup = false;
  ExprPtr having;
  std::vector<OrderItem> order_by;
  Limit limit;                     // limit.count null when absent
  // WINDOW name AS (PARTITION BY .. ORDER BY ..): the named windows' expressions.
  std::vector<ExprPtr> window_partition;
  std::vector<OrderItem> window_order;
  LockMode lock = LockMode::kNone;
  SourceRange into;                // INTO @v, @w / INTO OUTFILE ... clause; empty when absent
  // UNION: this block is the first branch. When non-empty, union_order_by /
  // union_limit hold the ORDER BY / LIMIT written after the last branch,
  // which apply to the whole union; a branch's own order_by/limit are set
  // only when it was parenthesised.
  std::vector<UnionBranch> unions;
  std::vector<OrderItem> union_order_by;
  Limit union_limit;
};

struct UnionBranch {
  bool all = false;  // UNION ALL (UNION and UNION DISTINCT are both false)
  SelectPtr select;
};

struct Assignment {
  ColumnRef column;
  ExprPtr value;      // may be kDefault
  SourceRange range;  // column through value
};

// INSERT and REPLACE.
struct InsertStatement {
  bool replace = false;
  bool ignore = false;
  TableName table;
  Identifier alias;                          // INSERT ... VALUES (...) AS new (MySQL 8 row alias)
  std::vector<Identifier> columns;           // (c1, c2); empty when not written
  std::vector<std::vector<ExprPtr>> rows;    // VALUES (...), (...)
  std::vector<SourceRange> row_ranges;       // each row's "( ... )" including parentheses
  std::vector<Assignment> set;               // INSERT ... SET c = v
  SelectPtr select;                          // INSERT ... SELECT
  std::vector<Assignment> on_duplicate;      // ON DUPLICATE KEY UPDATE; VALUES(c) is a kFunction
};

struct UpdateStatement {
  bool ignore = false;
  std::vector<TableRefPtr> tables;  // single table, or multi-table join list
  std::vector<Assignment> set;
  ExprPtr where;
  std::vector<OrderItem> order_by;
  Limit limit;
};

struct DeleteStatement {
  bool ignore = false;
  // Single-table DELETE FROM t: targets empty, from = {t}.
  // Multi-table DELETE t1, t2 FROM <refs> / DELETE FROM t1, t2 USING <refs>:
  // targets lists the tables rows are deleted from.
  std::vector<TableName> targets;
  std::vector<TableRefPtr> from;
  ExprPtr where;
  std::vector<OrderItem> order_by;
  Limit limit;
};

struct Statement {
  StatementKind kind = StatementKind::kOther;  // same classification as classify()
  SourceRange range;                           // without a trailing ';'
  uint32_t placeholder_count = 0;
  uint32_t node_count = 0;             // expression nodes and table references (ParseLimits::max_nodes)
  bool uses_window_functions = false;  // an OVER (...) anywhere in the statement
  // Exactly one is set for kSelect / kInsert / kReplace (insert) / kUpdate /
  // kDelete; all null for other kinds.
  SelectPtr select;
  std::unique_ptr<InsertStatement> insert;
  std::unique_ptr<UpdateStatement> update;
  std::unique_ptr<DeleteStatement> del;
};

}  // namespace sp::parser
