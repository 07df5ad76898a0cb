#include "proxy/core/replica_health.hpp"

namespace sp::proxy {

std::string_view serverStateName(ServerState state) {
  switch (state) {
    case ServerState::kUnknown: return "unknown";
    case ServerState::kUp: return "up";
    case ServerState::kDown: return "down";
    case ServerState::kLagging: return "lagging";
    case ServerState::kBrokenReplication: return "broken_replication";
  }
  return "unknown";
}

std::string failoverLoss(const ServerHealth& primary) {
  if (!primary.answered) return "unknown (the primary does not answer)";
  return failoverLossFromLastProbe(primary);
}

std::string failoverLossFromLastProbe(const ServerHealth& primary) {
  if (primary.checked_unix_ms == 0) return "unknown (the primary never answered a probe)";
  if (!primary.semi_sync_enabled) return "possible: asynchronous replication";
  if (!primary.semi_sync_active) return "possible: semi-sync fell back to asynchronous (no replica acknowledged in time)";
  if (primary.semi_sync_wait_point == "AFTER_SYNC") return "none: semi-sync AFTER_SYNC";
  return "none acknowledged, but other sessions may have read writes a failover loses: semi-sync " +
         primary.semi_sync_wait_point;
}

}  // namespace sp::proxy
