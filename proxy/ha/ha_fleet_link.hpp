// What the replication groups need of a fleet (docs/availability.md, "In a
// fleet"): role changes decided by one proxy and followed by all of them,
// through etcd (coord/ha_records.hpp). Defined here, implemented by
// proxy/fleet (FleetRoles), so that the HA subsystem never sees etcd, the
// way the map publisher defines FleetLink.
//
// A change, on the deciding proxy: begin() claims ha/change (refused when
// another change runs or etcd does not answer: a proxy cut off from etcd
// changes no roles); every other proxy holds the group's statements and
// acknowledges; awaitHolds() waits for those acknowledgements; the roles
// change on the servers; publish() puts the new topology (compare-and-swap
// on the revision begin() read); end() deletes ha/change.
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "proxy/core/topology.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

struct RoleChangeTicket {
  int64_t change_revision = 0;    // ha/change's create revision: what the others acknowledge
  int64_t topology_revision = 0;  // ha/topology's mod revision when the change began (0: none yet)
  uint64_t topology_version = 0;  // its version
  std::optional<Topology> fleet_topology;  // the fleet's roles when the change began (none yet: nullopt)
};

class HaFleetLink {
 public:
  virtual ~HaFleetLink() = default;
  virtual const std::string& proxyName() const = 0;
  // `kind`: "switchover" | "failover" | "rejoin".
  virtual awaitable<std::expected<RoleChangeTicket, std::string>> begin(std::string backend, std::string kind,
                                                                        std::string who, uint32_t hold_ms) = 0;
  // Until every live proxy of the fleet but this one acknowledged the change,
  // or `deadline`; the error names the proxies missing.
  virtual awaitable<std::expected<void, std::string>> awaitHolds(RoleChangeTicket ticket,
                                                                 std::chrono::steady_clock::time_point deadline) = 0;
  virtual awaitable<std::expected<void, std::string>> publish(Topology topology, RoleChangeTicket ticket) = 0;
  virtual awaitable<void> end(RoleChangeTicket ticket) = 0;
  // This proxy acknowledges another's change (it holds the group).
  virtual awaitable<void> acknowledge(int64_t change_revision) = 0;
  // Whether this proxy holds ha/leader now: only the leader fails over by itself.
  virtual bool leads() const = 0;
};

// What the fleet tells the replication groups (HaCoordinator implements it;
// called from the fleet agent's thread, returns at once).
class HaFleetFollower {
 public:
  virtual ~HaFleetFollower() = default;
  // Another proxy began a role change of `backend`: hold its statements.
  virtual void fleetChangeBegun(std::string backend, std::string kind, std::string proxy, int64_t change_revision,
                                uint32_t hold_ms) = 0;
  // The change with this revision ended (done or abandoned): release.
  virtual void fleetChangeEnded(int64_t change_revision) = 0;
  // The fleet's roles (ha/topology at `revision`): apply what differs.
  virtual void fleetTopology(Topology topology, int64_t revision) = 0;
};

}  // namespace sp::proxy
