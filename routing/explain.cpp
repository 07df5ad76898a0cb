#include "routing/explain.hpp"

#include "parser/lexer.hpp"
#include "routing/conditions.hpp"

namespace sp::routing {

std::optional<std::string_view> explainShardsStatement(std::string_view sql) {
  parser::Lexer lexer(sql);
  parser::Token first = lexer.nextSignificant();
  if (first.kind != parser::TokenKind::kIdentifier || !equalsIgnoreCase(first.text(sql), "EXPLAIN")) {
    return std::nullopt;
  }
  parser::Token second = lexer.nextSignificant();
  if (second.kind != parser::TokenKind::kIdentifier || !equalsIgnoreCase(second.text(sql), "SHARDS")) {
    return std::nullopt;
  }
  parser::Token third = lexer.nextSignificant();
  if (third.kind == parser::TokenKind::kEnd) return std::nullopt;
  return sql.substr(third.begin);
}

std::vector<ExplainRow> explainRows(const Plan& plan) {
  std::vector<ExplainRow> rows;
  if (plan.kind == PlanKind::kRefused) {
    RouteErrorInfo info = routeErrorInfo(plan.refusal->code);
    rows.push_back({"-", "-", "-",
                    "ERROR " + std::to_string(info.mysql_errno) + " (" + std::string(info.sqlstate) +
                        "): " + plan.refusal->message});
    return rows;
  }
  if (plan.kind == PlanKind::kScatter && plan.scatter) {
    // One row per shard queried, then how the proxy combines their results.
    for (const auto& t : plan.scatter->targets) {
      rows.push_back({t.shard.empty() ? "-" : t.shard, t.backend, t.physical_table.empty() ? "-" : t.physical_table,
                      t.sql});
    }
    rows.push_back({"-", "-", "-", "merge: " + plan.scatter->merge.describe()});
    return rows;
  }
  for (const auto& t : plan.targets) {
    rows.push_back({t.shard.empty() ? "-" : t.shard, t.backend, t.physical_table.empty() ? "-" : t.physical_table,
                    t.sql});
  }
  return rows;
}

}  // namespace sp::routing
