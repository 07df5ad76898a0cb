// The admin port's statement limits (docs/admin.md, "Statement limits"):
//   SHOW LIMITS
//   SET LIMIT FOR USER <name> [max_per_second = <n>] [, max_concurrent = <n>]
//   SET LIMIT FOR DIGEST '<statement>' [max_per_second = <n>] [, max_concurrent = <n>]
// A key left out is 0 (no such limit); both 0 remove the rule. Pure parsing;
// the table is proxy/core/statement_limit_table.hpp.
#pragma once
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "conf/statement_limits_config.hpp"
#include "proxy/core/admin_reply.hpp"

namespace sp::proxy {

class StatementLimits;

struct LimitCommand {
  enum class Kind : uint8_t { kShow, kSet };
  Kind kind = Kind::kShow;
  conf::StatementLimitRule rule;  // kSet
};

std::optional<std::expected<LimitCommand, std::string>> parseLimitCommand(std::string_view sql);

// In a fleet, SET LIMIT puts the rule in etcd first (every proxy applies it);
// null alone. An error: nothing changed here either.
using LimitPublisher = std::function<std::expected<void, std::string>(const conf::StatementLimitRule&)>;

// `known_user`: whether a user of users: has this name (SET LIMIT FOR USER of
// another is refused: it would never match).
AdminReply runLimitCommand(StatementLimits& limits, const LimitCommand& command, bool known_user,
                           const LimitPublisher& publish = nullptr);

std::vector<std::pair<std::string, std::string>> limitCommandHelp();

}  // namespace sp::proxy
