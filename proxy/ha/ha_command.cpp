#include "proxy/ha/ha_command.hpp"

#include "proxy/core/command_cursor.hpp"

namespace sp::proxy {

namespace {

using Parsed = std::expected<HaCommand, std::string>;

Parsed malformed(std::string_view form) { return std::unexpected("shardproxy admin: expected " + std::string(form)); }

// "<backend> [TO <server>]" and the end.
Parsed parseTarget(CommandCursor& c, HaCommandKind kind, std::string_view form) {
  HaCommand cmd;
  cmd.kind = kind;
  auto backend = c.name();
  if (!backend) return malformed(form);
  cmd.backend = *backend;
  if (c.accept({"to"})) {
    auto server = c.name();
    if (!server) return malformed(form);
    cmd.server = *server;
  }
  if (!c.done()) return malformed(form);
  return cmd;
}

}  // namespace

std::optional<Parsed> parseHaCommand(std::string_view sql) {
  CommandCursor c(sql);
  if (c.hasError()) return std::nullopt;
  if (c.accept({"switchover", "backend"})) {
    return parseTarget(c, HaCommandKind::kSwitchover, "SWITCHOVER BACKEND <backend> [TO <replica>]");
  }
  if (c.accept({"failover", "backend"})) {
    return parseTarget(c, HaCommandKind::kFailover, "FAILOVER BACKEND <backend> [TO <replica>]");
  }
  if (c.accept({"switchover"}) || c.accept({"failover"})) {
    return malformed("SWITCHOVER BACKEND <backend> [TO <replica>] or FAILOVER BACKEND <backend> [TO <replica>]");
  }
  if (c.accept({"rejoin", "backend"})) {
    constexpr std::string_view form = "REJOIN BACKEND <backend> SERVER <server>";
    HaCommand cmd;
    cmd.kind = HaCommandKind::kRejoin;
    auto backend = c.name();
    if (!backend || !c.accept({"server"})) return malformed(form);
    auto server = c.name();
    if (!server || !c.done()) return malformed(form);
    cmd.backend = *backend;
    cmd.server = *server;
    return cmd;
  }
  if (c.accept({"rejoin"})) return malformed("REJOIN BACKEND <backend> SERVER <server>");
  if (c.accept({"show", "topology"})) {
    if (!c.done()) return malformed("SHOW TOPOLOGY");
    return HaCommand{};
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> haCommandHelp() {
  return {
      {"SHOW TOPOLOGY", "each replication group: its primary, replicas, fenced servers, and the last change"},
      {"SWITCHOVER BACKEND <backend> [TO <replica>]",
       "planned primary change: hold the backend's statements, make the primary read-only, wait for the replica to "
       "apply everything, promote it, repoint the others, release (0 errors, 0 lost writes)"},
      {"FAILOVER BACKEND <backend> [TO <replica>]",
       "the primary is unreachable: promote the most advanced replica, repoint the others, fence the old primary "
       "(read-only whenever it answers) until REJOIN"},
      {"REJOIN BACKEND <backend> SERVER <server>",
       "a fenced old primary rejoins as a replica of the current primary (refused when it has writes the group lacks)"},
  };
}

}  // namespace sp::proxy
