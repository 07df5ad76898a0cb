// Replication groups at run time (docs/availability.md): the replica
// monitor, the roles in force (ProxyContext::topology, kept in SQLite), and
// the commands that change them: SWITCHOVER (planned, lossless), FAILOVER
// (the primary is gone), REJOIN (a fenced old primary becomes a replica),
// and the automatic failover of ha.auto_failover. One thread of its own;
// one role change at a time. It reaches the workers' pools only through
// PoolHost (hold, count busy connections, repoint, release).
#pragma once
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
#include "proxy/net/net.hpp"

namespace sp::proxy {

class ReplicaMonitor;
class TopologyStore;
class BackendConnection;

class HaCoordinator {
 public:
  explicit HaCoordinator(ProxyContext& context);
  ~HaCoordinator();
  HaCoordinator(const HaCoordinator&) = delete;
  HaCoordinator& operator=(const HaCoordinator&) = delete;

  // Before the workers are built: publishes the roles in force (saved in
  // SQLite by an earlier run, else the configuration's) in context.topology.
  void loadTopology();
  // After the workers: starts the thread and the replica monitor.
  void start(std::vector<PoolHost*> hosts);
  void stop();

  // One admin command, answered when it is done. `who` goes to the log and
  // to SHOW TOPOLOGY's change column.
  awaitable<AdminReply> execute(HaCommand command, std::string who);

 private:
  struct Links;
  awaitable<AdminReply> run(HaCommand command, std::string who);
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
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace sp::proxy
