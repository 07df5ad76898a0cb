// The availability commands of the admin port (docs/admin.md,
// "Replication groups"): SWITCHOVER, FAILOVER, REJOIN and SHOW TOPOLOGY.
// Parsed apart from admin_command.cpp like the move commands; they run on
// the HA coordinator (ha_coordinator.hpp). Pure.
#pragma once
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::proxy {

enum class HaCommandKind : uint8_t {
  kSwitchover,    // SWITCHOVER BACKEND <backend> [TO <server>]
  kFailover,      // FAILOVER BACKEND <backend> [TO <server>]
  kRejoin,        // REJOIN BACKEND <backend> SERVER <server>
  kShowTopology,  // SHOW TOPOLOGY
};

struct HaCommand {
  HaCommandKind kind = HaCommandKind::kShowTopology;
  std::string backend;
  std::string server;  // the target (empty: the coordinator picks) or the server to rejoin
};

// nullopt: not one of these commands; an error: one of them spelled wrongly.
std::optional<std::expected<HaCommand, std::string>> parseHaCommand(std::string_view sql);

// Lines for HELP.
std::vector<std::pair<std::string, std::string>> haCommandHelp();

}  // namespace sp::proxy
