#include "routing/explain.hpp"

#include "parser/lexer.hpp"
#include "routing/conditions.hpp"

namespace sp::routing {

std::optional<std::string_view> explainShardsStatement(std::string_view sql) {
  return explainShardsStatement(sql, parser::tokenize(sql));
}

std::optional<std::string_view> explainShardsStatement(std::string_view sql, std::span<const parser::Token> tokens) {
  auto word = [&](size_t i, std::string_view w) {
    return i < tokens.size() && tokens[i].kind == parser::TokenKind::kIdentifier && equalsIgnoreCase(tokens[i].text(sql), w);
  };
  if (!word(0, "EXPLAIN") || !word(1, "SHARDS") || tokens.size() < 3 || tokens[2].kind == parser::TokenKind::kEnd) {
    return std::nullopt;
  }
  return sql.substr(tokens[2].begin);
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
