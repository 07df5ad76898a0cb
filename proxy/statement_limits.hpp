// The parser budgets of config `limits`, as routing::PlannerInput takes them.
#pragma once
#include "conf/config.hpp"
#include "parser/parse.hpp"

namespace sp::proxy {

inline parser::ParseLimits parseLimits(const conf::Config& config) {
  return parser::ParseLimits{config.limits.max_statement_nodes, config.limits.max_expression_depth,
                             config.limits.max_in_list_values};
}

}  // namespace sp::proxy
