// What the role-change files of HaCoordinator share (ha_switchover.cpp,
// ha_failover.cpp, ha_rejoin.cpp: the commands on the servers, through
// server_control.hpp; ha_fleet_roles.cpp: the same in a fleet).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "proxy/core/admin_reply.hpp"

namespace sp::proxy::role_change {

using Clock = std::chrono::steady_clock;
inline constexpr uint16_t kRefused = 9140;  // the command cannot run now (documented in docs/admin.md)
inline constexpr uint16_t kAborted = 9142;  // a switchover gave up and undid what it did
inline constexpr auto kDrainPoll = std::chrono::milliseconds(1);

inline AdminError refused(std::string message) {
  return AdminError{kRefused, "HY000", "shardproxy admin: " + std::move(message)};
}

}  // namespace sp::proxy::role_change
