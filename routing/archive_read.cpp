#include "routing/archive_read.hpp"

#include <algorithm>
#include <charconv>

#include "parser/literal_text.hpp"
#include "routing/conditions.hpp"

namespace sp::routing {

namespace {

using parser::Expr;
using parser::ExprKind;

constexpr std::string_view kAggregates[] = {"COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "BIT_AND",
                                            "BIT_OR", "BIT_XOR", "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP",
                                            "VARIANCE", "VAR_POP", "VAR_SAMP", "JSON_ARRAYAGG", "JSON_OBJECTAGG"};

// The literal a lifted `?` stands for; null for a bound parameter.
const ParamValue* liftedLiteral(const Expr& e, std::span<const ParamValue> params) {
  if (e.placeholder_index >= params.size() || params[e.placeholder_index].kind != ParamValue::Kind::kLiteral) {
    return nullptr;
  }
  return &params[e.placeholder_index];
}

bool isPlaceholder(const Expr& e) {
  return e.kind == ExprKind::kLiteral && e.literal_kind == parser::LiteralKind::kPlaceholder;
}

// True when `e` holds something that changes meaning once rows are limited
// per branch (an aggregate, a window function) or a bound `?`.
bool blocksPushdown(const Expr* e, std::span<const ParamValue> params) {
  if (!e) return false;
  if (isPlaceholder(*e) && !liftedLiteral(*e, params)) return true;
  if (e->kind == ExprKind::kFunction) {
    if (e->window) return true;
    for (auto name : kAggregates) {
      if (equalsIgnoreCase(e->name, name)) return true;
    }
  }
  // A subquery could hold a `?` too: no pushdown (refs.tables already keeps subqueries naming tables out).
  if (e->subquery || blocksPushdown(e->case_operand.get(), params) || blocksPushdown(e->case_else.get(), params)) {
    return true;
  }
  return std::any_of(e->args.begin(), e->args.end(), [&](const auto& a) { return blocksPushdown(a.get(), params); });
}

std::optional<uint64_t> integerLiteral(const Expr* e, std::string_view sql, std::span<const ParamValue> params) {
  if (!e || e->kind != ExprKind::kLiteral) return std::nullopt;
  std::string_view text = parser::literalText(*e, sql);
  if (isPlaceholder(*e)) {
    const ParamValue* p = liftedLiteral(*e, params);
    if (!p || p->literal_kind != parser::LiteralKind::kInteger) return std::nullopt;
    text = p->literal_text;
  } else if (e->literal_kind != parser::LiteralKind::kInteger) {
    return std::nullopt;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// sql[range] with the edits that fall inside it applied; `with_appended`:
// also insertions at its end (the month predicate a month table's WHERE gets).
std::string editedText(std::string_view sql, parser::SourceRange range, const std::vector<TextEdit>& edits,
                       bool with_appended = false) {
  std::vector<TextEdit> inside;
  for (const auto& e : edits) {
    bool appended = e.begin == e.end && e.begin == range.end;
    if (e.begin >= range.begin && e.end <= range.end && (!appended || with_appended)) {
      inside.push_back({e.begin - range.begin, e.end - range.begin, e.replacement});
    }
  }
  return applyEdits(range.text(sql), std::move(inside));
}

std::string quoted(std::string_view name) { return "`" + std::string(name) + "`"; }

}  // namespace

std::optional<BranchOrderLimit> pushdownOrderLimit(std::string_view sql, const parser::Statement& statement,
                                                   const StatementRefs& refs, std::span<const ParamValue> params,
                                                   const std::vector<TextEdit>& edits) {
  const parser::SelectStatement* s = statement.select.get();
  if (!s || refs.tables.size() != 1 || !s->unions.empty() || s->distinct || s->sql_calc_found_rows ||
      !s->group_by.empty() || s->having || !s->window_partition.empty() || !s->window_order.empty() ||
      !s->into.empty() || s->lock != parser::LockMode::kNone || s->order_by.empty() || !s->limit.count) {
    return std::nullopt;
  }
  auto count = integerLiteral(s->limit.count.get(), sql, params);
  auto offset = s->limit.offset ? integerLiteral(s->limit.offset.get(), sql, params) : std::optional<uint64_t>(0);
  if (!count || !offset || *count > UINT64_MAX - *offset) return std::nullopt;
  for (const auto& item : s->items) {
    if (blocksPushdown(item.expr.get(), params)) return std::nullopt;
  }
  if (blocksPushdown(s->where.get(), params)) return std::nullopt;
  BranchOrderLimit out;
  for (const auto& o : s->order_by) {
    // A plain column of the table: a position (ORDER BY 2) or an expression
    // could mean something else over `SELECT *`.
    if (o.expr->kind != ExprKind::kColumn || !o.expr->column.db.empty()) return std::nullopt;
    std::string_view name = o.expr->column.column.value;
    for (const auto& item : s->items) {
      if (!item.alias.empty() && equalsIgnoreCase(item.alias.value, name)) return std::nullopt;
    }
    out.order_by += (out.order_by.empty() ? "" : ", ") + editedText(sql, o.range, edits);
  }
  if (s->where) out.where = editedText(sql, s->where->range, edits, true);
  out.rows = *count + *offset;
  return out;
}

bool readHotAndCold(std::string_view sql, const parser::Statement& statement, const StatementRefs& refs,
                    const TableRule& rule, const Shard& shard, std::optional<uint64_t> key,
                    std::span<const ParamValue> params, std::vector<TextEdit>& edits) {
  if (shard.archive_table.empty()) return false;
  auto pushed = pushdownOrderLimit(sql, statement, refs, params, edits);
  // The guard is the key's: with the table named twice (a self-join) the
  // other reference may read another key of the shard.
  auto uses = std::count_if(refs.tables.begin(), refs.tables.end(),
                            [&](const TableUse& u) { return equalsIgnoreCase(u.name->table.value, rule.name); });
  if (uses != 1 || rule.archive_seq_column.empty()) key.reset();
  for (const auto& use : refs.tables) {
    // alias is null for INSERT/DELETE targets: only tables read in a FROM get the union.
    if (!use.alias || !equalsIgnoreCase(use.name->table.value, rule.name)) continue;
    const parser::TableName& name = *use.name;
    std::string db = name.db.empty() ? std::string() : std::string(name.db.range.text(sql)) + ".";
    std::string hot = db + quoted(shard.physical_table);
    std::string guard;
    if (key) {
      guard = quoted(rule.archive_seq_column) + " < (SELECT IFNULL(MIN(" + quoted(rule.archive_seq_column) +
              "), 18446744073709551615) FROM " + hot + " WHERE " + quoted(rule.key) + " = " + std::to_string(*key) +
              ")";
    }
    std::string text;
    if (pushed) {
      std::string alias = use.alias->empty() ? quoted(shard.physical_table) : std::string(use.alias->range.text(sql));
      std::string where = pushed->where.empty() ? std::string() : "(" + pushed->where + ")";
      std::string tail = " ORDER BY " + pushed->order_by + " LIMIT " + std::to_string(pushed->rows) + ")";
      std::string cold_where = where.empty() ? guard : guard.empty() ? where : where + " AND " + guard;
      text = "((SELECT * FROM " + hot + " AS " + alias + (where.empty() ? "" : " WHERE " + where) + tail +
             " UNION ALL (SELECT * FROM " + db + quoted(shard.archive_table) + " AS " + alias +
             (cold_where.empty() ? "" : " WHERE " + cold_where) + tail + ")";
    } else {
      text = "(SELECT * FROM " + hot + " UNION ALL SELECT * FROM " + db + quoted(shard.archive_table) +
             (guard.empty() ? "" : " WHERE " + guard) + ")";
    }
    if (use.alias->empty()) text += " AS " + quoted(shard.physical_table);
    std::erase_if(edits, [&](const TextEdit& e) { return e.begin == name.table.range.begin; });
    edits.push_back({name.range.begin, name.table.range.end, std::move(text)});
  }
  return pushed.has_value();
}

}  // namespace sp::routing
