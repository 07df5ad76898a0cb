// A proxy's side of the fleet's fenced cut-overs (coord/fleet_fence.hpp;
// docs/operations.md, "Fleets"). Runs on the fleet agent's thread, fed by
// its watch of <prefix>/fence/ (one stream with <prefix>/map, so a switch's
// map is applied before the lift that follows it is seen):
//   - a fence request appears: its keys are held in this proxy's WriteHold
//     (the hold of the local cut-over: writes to them wait), and once the
//     writes in flight to them (and older writes and transactions) ended,
//     "holding" is written under this proxy's lease;
//   - the fence is lifted: the held writes go on against the map in force
//     (they re-plan when it changed); if the fence said the map switched at
//     a revision this proxy has not applied, they are refused (9138) until it
//     has;
//   - the session with etcd ends: every held key is refused at once (9138)
//     until a new session re-read the fences and then the map.
// Writes to keys no fence holds go on during an etcd outage: a fence this
// proxy cannot see cannot switch without it (the mover waits for every proxy
// of the roster, coord/fleet_fence.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "coord/fleet_fence.hpp"
#include "proxy/fleet/etcd_fence_store.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"
#include "routing/map/move_plan.hpp"

namespace sp::proxy {

coord::FenceKeys fenceKeysOf(const routing::MovingKeys& keys, const std::string& source_table);
std::expected<routing::MovingKeys, std::string> movingKeysOf(const coord::FenceKeys& keys);

class FleetFences {
 public:
  // `executor`: the agent's (drains are polled there).
  FleetFences(ProxyContext& context, const conf::FleetConfig& config, EtcdClient& client,
              asio::any_io_executor executor);

  // A session began under `lease`: `open` are the fences read before the map
  // (epoch -> request text, switched revision or 0). New ones are held and
  // acknowledged, known ones acknowledged again, gone ones released.
  struct Open {
    std::string request;
    int64_t switched_revision = 0;
  };
  void resynchronise(int64_t lease, const std::map<int64_t, Open>& open);
  // Watch events.
  void onRequest(int64_t epoch, const std::string& request);
  void onSwitched(int64_t epoch, int64_t revision);
  void onLifted(int64_t epoch);
  // The session with etcd ended: held keys are refused until the next resynchronise.
  void sessionLost();
  // Periodic: releases fences whose switched map was applied since; forgets
  // released ones once no transaction older than their release is open.
  void sweep();
  size_t size() const { return fences_.size(); }

 private:
  struct Fence;
  void hold(int64_t epoch, const std::string& request);
  void release(Fence& fence);
  awaitable<void> drainAndAcknowledge(int64_t epoch, int64_t lease);
  void acknowledge(int64_t epoch);

  ProxyContext& context_;
  const conf::FleetConfig& config_;
  asio::any_io_executor executor_;
  EtcdFenceStore store_;
  int64_t lease_ = 0;  // of the session in progress (0: none)
  std::map<int64_t, std::shared_ptr<Fence>> fences_;
};

}  // namespace sp::proxy
