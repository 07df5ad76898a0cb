// The parser budgets of config `limits`, as routing::PlannerInput takes them.
#pragma once
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "conf/limits_config.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "protocol/generic_packets.hpp"
#include "routing/route_error.hpp"

namespace sp::proxy {

inline parser::ParseLimits parseLimits(const conf::LimitsConfig& limits) {
  return parser::ParseLimits{limits.max_statement_nodes, limits.max_expression_depth, limits.max_in_list_values};
}

// The planner's token budget, applied before anything else reads the
// statement (classify, the statement policy, digests each tokenize it whole):
// a statement over it is refused with 9115 as the planner would refuse it,
// without those passes holding tens of millions of tokens (a 20 MB IN list
// of 10 million values made each of them grow a 240 MB token vector). Only
// statements longer than the budget in bytes are counted (a token takes at
// least one byte), with a lexer pass and no memory.
inline std::optional<protocol::ErrPacket> tokenBudgetRefusal(std::string_view sql, const conf::LimitsConfig& limits,
                                                             const parser::Dialect& dialect) {
  const uint64_t max_tokens = parser::maxStatementTokens(parseLimits(limits));
  if (sql.size() <= max_tokens || parser::countTokens(sql, max_tokens, dialect) <= max_tokens) return std::nullopt;
  const auto info = routing::routeErrorInfo(routing::RouteErrorCode::kTooComplex);
  return protocol::ErrPacket{info.mysql_errno, std::string(info.sqlstate),
                             fmt::format("shardproxy: statement too complex: more than {} tokens "
                                         "(limits.max_statement_nodes {})",
                                         max_tokens, limits.max_statement_nodes)};
}

}  // namespace sp::proxy
