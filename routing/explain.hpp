// EXPLAIN SHARDS <statement>: the client sees, without execution, one row per
// target of the statement's plan (shard, backend, table, sql), or one row
// carrying the refusal. The session detects the prefix and sends the rows as
// a result set; the same rows serve the admin SHOW ROUTE command.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.hpp"
#include "routing/plan.hpp"

namespace sp::routing {

// When `sql` is `EXPLAIN SHARDS <statement>` (any letter case, comments and
// spacing allowed between the words), the statement's text; else nullopt.
std::optional<std::string_view> explainShardsStatement(std::string_view sql);
// The same from the statement's tokens (parser/analysis.hpp).
std::optional<std::string_view> explainShardsStatement(std::string_view sql, std::span<const parser::Token> tokens);

// Result-set column names, in order.
inline constexpr std::string_view kExplainColumns[] = {"shard", "backend", "table", "sql"};

struct ExplainRow {
  std::string shard;     // "-" when not a shard (passthrough, refusal)
  std::string backend;   // "-" for a refusal
  std::string table;     // physical table, "-" when none
  std::string sql;       // the SQL the backend would receive, or "ERROR <errno> (<sqlstate>): <message>"
};

// kScatter: one row per shard target, then a row (shard, backend and table
// "-") whose sql is "merge: <MergeSpec::describe()>".
std::vector<ExplainRow> explainRows(const Plan& plan);

}  // namespace sp::routing
