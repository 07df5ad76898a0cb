#include "proxy/admin/limit_command.hpp"

#include <fmt/format.h>

#include "proxy/core/command_cursor.hpp"
#include "proxy/core/statement_limit_table.hpp"

namespace sp::proxy {

std::optional<std::expected<LimitCommand, std::string>> parseLimitCommand(std::string_view sql) {
  CommandCursor c(sql);
  LimitCommand command;
  if (c.accept({"SHOW", "LIMITS"})) {
    if (!c.done()) return std::unexpected(std::string("usage: SHOW LIMITS"));
    return command;
  }
  if (!c.accept({"SET", "LIMIT"})) return std::nullopt;
  const auto usage = [] {
    return std::unexpected(std::string(
        "usage: SET LIMIT FOR USER <name> | DIGEST '<statement>' [max_per_second = <n>] [, max_concurrent = <n>]"));
  };
  command.kind = LimitCommand::Kind::kSet;
  if (c.accept({"FOR", "USER"})) {
    auto name = c.name();
    if (!name) name = c.string();
    if (!name || name->empty()) return usage();
    command.rule.user = *name;
  } else if (c.accept({"FOR", "DIGEST"})) {
    auto text = c.string();
    if (!text || text->empty()) return usage();
    command.rule.digest = *text;
  } else {
    return usage();
  }
  // [key = n] [, key = n]
  for (bool first = true; !c.done(); first = false) {
    if (!first && !c.accept(parser::TokenKind::kComma)) return usage();
    const bool rate = c.accept({"max_per_second"});
    if (!rate && !c.accept({"max_concurrent"})) return usage();
    if (!c.accept(parser::TokenKind::kEquals)) return usage();
    auto value = c.integer();
    if (!value) return usage();
    const uint32_t max = rate ? conf::kMaxStatementRate : conf::kMaxStatementConcurrency;
    if (*value > max) {
      return std::unexpected(fmt::format("{} takes 0 to {}", rate ? "max_per_second" : "max_concurrent", max));
    }
    (rate ? command.rule.max_per_second : command.rule.max_concurrent) = static_cast<uint32_t>(*value);
  }
  return command;
}

AdminReply runLimitCommand(StatementLimits& limits, const LimitCommand& command, bool known_user,
                           const LimitPublisher& publish) {
  if (command.kind == LimitCommand::Kind::kSet) {
    if (!command.rule.user.empty() && !known_user) {
      return AdminError{1105, "HY000", "shardproxy admin: no user " + command.rule.user + " in users:"};
    }
    if (publish) {
      if (auto shared = publish(command.rule); !shared) {
        return AdminError{1105, "HY000", "shardproxy admin: the limit was not set (in a fleet it is set for every proxy): " +
                                             shared.error()};
      }
    }
    // Here at once (the fleet's watch brings the same rule back, which changes nothing).
    if (auto set = limits.set(command.rule); !set) return AdminError{1105, "HY000", "shardproxy admin: " + set.error()};
    return AdminOk{};
  }
  LocalResult out;
  out.columns = {"kind",      "name",      "max_per_second", "max_concurrent", "share_per_second", "share_concurrent",
                 "in_flight", "admitted",  "refused_rate",   "refused_concurrency", "fleet_proxies"};
  const std::string proxies = std::to_string(limits.fleetProxies());
  for (const auto& r : limits.rows()) {
    out.rows.push_back({r.kind, r.name, std::to_string(r.max_per_second), std::to_string(r.max_concurrent),
                        std::to_string(r.share_per_second), std::to_string(r.share_concurrent),
                        std::to_string(r.in_flight), std::to_string(r.admitted), std::to_string(r.refused_rate),
                        std::to_string(r.refused_concurrency), proxies});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> limitCommandHelp() {
  return {
      {"SHOW LIMITS", "statement limits per user and per digest: the limit, this proxy's share, in flight, refusals"},
      {"SET LIMIT FOR USER <name> | DIGEST '<statement>' [max_per_second = n] [, max_concurrent = n]",
       "set a statement limit at run time (a key left out: none; both 0: removed)"},
  };
}

}  // namespace sp::proxy
