#include "proxy/exec/xa_fleet_resolution.hpp"

namespace sp::proxy {

namespace {

bool base36Text(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  }
  return true;
}

}  // namespace

std::optional<XaGtridOwner> gtridOwner(std::string_view gtrid, std::string_view prefix) {
  if (!gtrid.starts_with(prefix) || gtrid.size() <= prefix.size() || gtrid[prefix.size()] != '-') return std::nullopt;
  std::string_view rest = gtrid.substr(prefix.size() + 1);
  const size_t last = rest.rfind('-');
  if (last == std::string_view::npos || !base36Text(rest.substr(last + 1))) return std::nullopt;
  rest = rest.substr(0, last);  // <member>-<boot> or <boot>
  const size_t dash = rest.rfind('-');
  if (dash == std::string_view::npos) {
    if (!base36Text(rest)) return std::nullopt;
    return XaGtridOwner{{}, std::string(rest)};
  }
  std::string_view member = rest.substr(0, dash);
  std::string_view boot = rest.substr(dash + 1);
  if (member.empty() || !base36Text(boot)) return std::nullopt;
  return XaGtridOwner{std::string(member), std::string(boot)};
}

FleetResolution resolveFleetBranch(const FleetBranchFacts& f) {
  if (f.own && f.live) return FleetResolution::kLeaveLive;
  // Whatever the branch, a decision read from nowhere would be a guess.
  if (!f.etcd_read) return FleetResolution::kWaitEtcd;
  // A live member may still write its decision: only it may resolve its branch.
  if (!f.own && f.owner_registered) return FleetResolution::kWaitOwner;
  if (!f.decision) return FleetResolution::kSettle;
  return *f.decision == XaStoredOutcome::kCommit ? FleetResolution::kCommit : FleetResolution::kRollback;
}

std::string_view fleetResolutionName(FleetResolution what) {
  switch (what) {
    case FleetResolution::kLeaveLive: return "live";
    case FleetResolution::kWaitEtcd: return "waiting for etcd";
    case FleetResolution::kWaitOwner: return "waiting for its proxy (alive)";
    case FleetResolution::kCommit: return "commit";
    case FleetResolution::kRollback: return "rollback";
    case FleetResolution::kSettle: return "settle";
  }
  return "?";
}

}  // namespace sp::proxy
