// `statement_limits:` of the configuration (docs/operations.md, "Statement
// limits"): how many statements per second and at once one user, or one
// statement digest, may run. In a fleet each proxy takes its share (the
// limit divided by the proxies alive). Also set at run time on the admin
// port (SET LIMIT).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sp::conf {

struct StatementLimitRule {
  // Exactly one of them: a user of users:, or a statement's digest as SHOW
  // DIGESTS shows it (the statement normalized: literals as ?).
  std::string user;
  std::string digest;
  uint32_t max_per_second = 0;  // 0: no rate limit
  uint32_t max_concurrent = 0;  // 0: no concurrency limit
};

// Bounds of each limit (config and SET LIMIT alike).
inline constexpr uint32_t kMaxStatementRate = 10'000'000;
inline constexpr uint32_t kMaxStatementConcurrency = 1'000'000;
inline constexpr size_t kMaxStatementLimitRules = 1000;

}  // namespace sp::conf
