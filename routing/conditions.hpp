// What a WHERE clause pins down for routing. Only conjunctive positions count:
// the top-level AND chain (through parentheses). A predicate under OR, NOT or
// XOR, a `<>`, a function of the column, or a column compared with another
// column gives nothing; predicates inside subqueries belong to the subquery.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/ast.hpp"
#include "routing/map/month.hpp"
#include "routing/route_error.hpp"
#include "routing/values.hpp"

namespace sp::routing {

// Matches references to one column of the routed table: unqualified, or
// qualified by the table's alias (or by its name when it has no alias).
// Names compare ASCII case-insensitively, as MySQL compares column names.
struct ColumnMatcher {
  std::string_view column;
  std::string_view qualifier;  // alias if the table has one, else its name as written

  bool matches(const parser::ColumnRef& ref) const;
};

bool equalsIgnoreCase(std::string_view a, std::string_view b);

// Calls fn for each conjunct of the top-level AND chain of `where` (null: none).
template <class Fn>
void forEachConjunct(const parser::Expr* where, Fn&& fn) {
  if (!where) return;
  if (where->kind == parser::ExprKind::kBinary && where->binary_op == parser::BinaryOp::kAnd &&
      where->args.size() == 2) {
    forEachConjunct(where->args[0].get(), fn);
    forEachConjunct(where->args[1].get(), fn);
    return;
  }
  fn(*where);
}

struct KeyConstraint {
  enum class Kind : uint8_t {
    kNone,    // the key is not pinned: fan-out (or refusal) territory
    kValues,  // the key is one of `values`
    kEmpty,   // contradictory (conv_id = 1 AND conv_id = 2, conv_id = NULL): no row can match
  };
  Kind kind = Kind::kNone;
  std::vector<uint64_t> values;  // sorted, unique; kValues only
  std::optional<uint64_t> first_seen;  // first key value written (kEmpty: picks the shard that answers)
  std::vector<const parser::Expr*> in_lists;  // the `key IN (...)` conjuncts that gave values
  bool depends_on_params = false;  // a `?` took part (plans must not be cached across values)
  std::optional<Refusal> refusal;  // the key is compared with a value that cannot be routed exactly
};

// `table` names the table in messages ("msg").
KeyConstraint extractKey(const parser::Expr* where, std::string_view sql, const ColumnMatcher& key,
                         std::string_view table, std::span<const ParamValue> params);

struct MonthConstraint {
  MonthRange from_month_column;  // bounds written on the month column itself
  MonthRange combined;           // month column and time column bounds together
  bool depends_on_params = false;
  std::optional<Refusal> refusal;  // a bound that is not a valid date literal
};

// `time_column.column` may be empty (no time column configured).
MonthConstraint extractMonths(const parser::Expr* where, std::string_view sql, const ColumnMatcher& month_column,
                              const ColumnMatcher& time_column, std::span<const ParamValue> params);

}  // namespace sp::routing
