// What recovery does with a prepared branch of a fleet's global id
// (docs/routing.md, "In a fleet"), pure so that every case is unit-tested
// without etcd or servers (tests/unit/proxy/exec/xa_fleet_resolution_test.cpp).
// A fleet id is <xid_prefix>-<member>-<boot>-<n>: the member that decided.
//   - etcd not read this pass: wait (never guess), whoever's branch it is;
//   - this proxy's own id, registered (a commit in progress): leave it;
//   - another member's id while its member key exists: wait, it is alive
//     and finishes its own (or it dies, its lease expires, and then ...);
//   - this proxy's id (this run's, or an earlier run's under the same name)
//     or a dead member's: the decision record says commit or rollback; no
//     record: settle it (create a rollback record unless one appeared, which
//     the commit's only-if-absent compare then refuses for good) and roll back.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "proxy/core/xa_fleet_store.hpp"

namespace sp::proxy {

struct XaGtridOwner {
  std::string member;  // empty: an id of a proxy alone (<prefix>-<boot>-<n>)
  std::string boot;
};
// Who created `gtrid` (which starts with `prefix` + '-'); nullopt when it has
// not the shape of the proxy's ids. The member name may hold '-' and '.':
// boot and counter are the last two fields (base 36, no '-').
std::optional<XaGtridOwner> gtridOwner(std::string_view gtrid, std::string_view prefix);

struct FleetBranchFacts {
  bool etcd_read = false;         // this pass read the members and the decisions
  bool own = false;               // the id names this proxy's member name
  bool live = false;              // registered here: a commit of this run owns it
  bool owner_registered = false;  // the naming member's key exists in etcd
  std::optional<XaStoredOutcome> decision;  // its record, if any
};

enum class FleetResolution : uint8_t {
  kLeaveLive,    // this run's commit owns it
  kWaitEtcd,     // etcd was not read: in doubt until it is
  kWaitOwner,    // another member, alive: its own recovery resolves it
  kCommit,
  kRollback,     // a rollback record exists
  kSettle,       // no record: settle (XaFleetStore::settle), then do what it says
};
FleetResolution resolveFleetBranch(const FleetBranchFacts& facts);
std::string_view fleetResolutionName(FleetResolution what);

}  // namespace sp::proxy
