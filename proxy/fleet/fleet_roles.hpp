// Role changes of replication groups through etcd (HaFleetLink,
// proxy/ha/ha_fleet_link.hpp; keys in coord/ha_records.hpp): the deciding
// proxy's calls, run on the caller's executor (the HA thread) with a client
// of their own, under the fleet agent's lease. The other side (holding,
// acknowledging, applying ha/topology, the leader election) is the fleet
// agent's watch.
#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "conf/config.hpp"
#include "coord/ha_records.hpp"
#include "proxy/core/topology.hpp"
#include "proxy/fleet/etcd_client.hpp"
#include "proxy/ha/ha_fleet_link.hpp"

namespace sp::proxy {

coord::FleetTopologyRecord topologyRecord(const Topology& topology);
Topology topologyOfRecord(const coord::FleetTopologyRecord& record);

class FleetRoles final : public HaFleetLink {
 public:
  // `lease`: the fleet session's lease now (0: no session with etcd).
  FleetRoles(const conf::FleetConfig& config, std::function<int64_t()> lease);

  const std::string& proxyName() const override { return config_.name; }
  awaitable<std::expected<RoleChangeTicket, std::string>> begin(std::string backend, std::string kind, std::string who,
                                                                uint32_t hold_ms) override;
  awaitable<std::expected<void, std::string>> awaitHolds(RoleChangeTicket ticket,
                                                         std::chrono::steady_clock::time_point deadline) override;
  awaitable<std::expected<void, std::string>> publish(Topology topology, RoleChangeTicket ticket) override;
  awaitable<void> end(RoleChangeTicket ticket) override;
  awaitable<void> acknowledge(int64_t change_revision) override;
  bool leads() const override { return leader_.load(); }

  // Set by the fleet agent: it won ha/leader in this session, or lost it.
  void setLeader(bool leader) { leader_.store(leader); }

 private:
  // The proxies acknowledging `change_revision` and the live ones that do not (yet).
  awaitable<std::expected<std::vector<std::string>, std::string>> missingAcks(int64_t change_revision);

  const conf::FleetConfig config_;
  std::function<int64_t()> lease_;
  EtcdClient client_;
  std::atomic<bool> leader_{false};
};

}  // namespace sp::proxy
