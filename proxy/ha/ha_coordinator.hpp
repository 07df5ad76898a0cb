// Replication groups at run time (docs/availability.md): the replica
// monitor, the roles in force (ProxyContext::topology, kept in SQLite), and
// the commands that change them: SWITCHOVER (planned, lossless), FAILOVER
// (the primary is gone), REJOIN (a fenced old primary becomes a replica),
// and the automatic failover of ha.auto_failover. One thread of its own;
// one role change at a time. It reaches the workers' pools only through
// PoolHost (hold, count busy connections, repoint, release). In a fleet
// (docs/availability.md, "In a fleet") every change goes through etcd
// (HaFleetLink): one change at a time in the fleet, the other proxies hold
// the group while it runs and apply the roles it publishes; only the proxy
// holding ha/leader fails over by itself.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proxy/backend/pool_host.hpp"
#include "proxy/core/admin_reply.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/ha/down_marks.hpp"
#include "proxy/ha/ha_command.hpp"
#include "proxy/ha/ha_fleet_link.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class ReplicaMonitor;
class TopologyStore;
class BackendConnection;

class HaCoordinator final : public HaFleetFollower {
 public:
  explicit HaCoordinator(ProxyContext& context);
  ~HaCoordinator() override;
  HaCoordinator(const HaCoordinator&) = delete;
  HaCoordinator& operator=(const HaCoordinator&) = delete;

  // Before the workers are built: publishes the roles in force (saved in
  // SQLite by an earlier run, else the configuration's) in context.topology.
  void loadTopology();
  // After the workers: starts the thread and the replica monitor.
  void start(std::vector<PoolHost*> hosts);
  void stop();
  // A reload changed the backends (thread-safe: posted to the coordinator's
  // thread): the removed ones are no longer probed, the added ones are.
  void backendsChanged(std::vector<conf::BackendConfig> added, std::vector<std::string> removed);
  // In a fleet, once the fleet agent exists (before it starts).
  void attachFleet(HaFleetLink* link) { fleet_.store(link); }

  // HaFleetFollower (from the fleet agent's thread; the work is posted here).
  void fleetChangeBegun(std::string backend, std::string kind, std::string proxy, int64_t change_revision,
                        uint32_t hold_ms) override;
  void fleetChangeEnded(int64_t change_revision) override;
  void fleetTopology(Topology topology, int64_t revision) override;

  // One admin command, answered when it is done. `who` goes to the log and
  // to SHOW TOPOLOGY's change column.
  awaitable<AdminReply> execute(HaCommand command, std::string who);

 private:
  struct Links;
  awaitable<AdminReply> run(HaCommand command, std::string who);
  awaitable<AdminReply> runCommand(const HaCommand& command, const std::string& who);
  // run() in a fleet: claims the change in etcd, waits for the others to
  // hold, runs it, publishes the roles, ends the change.
  awaitable<AdminReply> runInFleet(HaFleetLink& fleet, HaCommand command, std::string who);
  // Applies the fleet's roles where they differ from this proxy's.
  void applyFleetRoles(const Topology& topology, const std::string& why);
  // Another proxy's change: this proxy's hold of the group ends.
  void endFleetHold(const std::string& backend);
  awaitable<AdminReply> switchover(const std::string& backend, std::string target, const std::string& who);
  awaitable<AdminReply> failover(const std::string& backend, std::string target, const std::string& who);
  awaitable<AdminReply> rejoin(const std::string& backend, const std::string& server, const std::string& who);
  AdminReply showTopology() const;
  // The backend's settings and its roles now (into `group`); null: no such backend.
  const conf::BackendConfig* groupOf(const std::string& backend, GroupTopology& group) const;
  void onProbe(const ServerHealth& server);
  // Marks (or unmarks) the pools lending to `mark.address` on every worker.
  void sendMark(const DownMark& mark);
  // Publishes `group` (version bumped), saves it, repoints the pools.
  // `primary_changed`: the backend's pool moves to the new primary.
  // `sever`: connections lent to the old primary are cut (FAILOVER).
  std::string publish(GroupTopology group, bool primary_changed, bool sever = false);
  bool holdAll(const std::string& backend, std::chrono::steady_clock::time_point until);
  void releaseAll(const std::string& backend);
  std::optional<uint32_t> busyTotal(const std::string& backend);

  ProxyContext& context_;
  std::vector<PoolHost*> hosts_;
  std::unique_ptr<TopologyStore> store_;
  std::unique_ptr<ReplicaMonitor> monitor_;
  std::set<std::string> switching_;  // backends whose roles are changing (this thread only)
  bool busy_ = false;                // one role change at a time (this thread only)
  DownMarks down_marks_;  // servers whose pools are marked down now (this thread only)
  std::map<std::string, int64_t> auto_attempted_;  // backend -> last automatic failover attempt (unix ms)
  std::atomic<HaFleetLink*> fleet_{nullptr};
  std::map<std::string, int64_t> fleet_held_;  // backend -> the other proxy's change this proxy holds it for
  int64_t fleet_topology_revision_ = 0;        // ha/topology's revision applied last (this thread only)
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace sp::proxy
