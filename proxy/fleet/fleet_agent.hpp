// A proxy's membership of a fleet (issue 19, docs/operations.md "Fleets"):
// one thread with its own io_context that keeps, while etcd answers,
//   - a lease (fleet.lease_ttl_s, kept alive every third of it) under which
//     <prefix>/proxies/<name> says which map version this proxy serves;
//   - a watch on <prefix>/fence/ .. <prefix>/map (one stream, in revision
//     order): every map published by any proxy is applied here through
//     ShardMapManager::applyFromFleet (same validation, same SQLite
//     history), and the fences of moves' cut-overs are held, acknowledged
//     and released by FleetFences (fleet_fences.hpp);
//   - the role changes of replication groups (coord/ha_records.hpp, in the
//     same watch): another proxy's change held here (HaFleetFollower), the
//     fleet's topology applied, ha/leader campaigned for (FleetRoles is the
//     deciding side);
//   - statement limits set at run time on any proxy (fleet_limits.hpp, in
//     the same watch), applied here;
//   - <prefix>/roster/<name> (no lease; it stays when the proxy stops, an
//     operator deletes it when the proxy leaves for good): a move's cut-over
//     waits for every proxy of the roster, so a proxy that is down, or up
//     but cut off from etcd and writing with the map it has, blocks it.
// When etcd is unreachable the proxy keeps serving the map it applied last
// and retries with backoff (50 ms doubling to fleet.retry_max_ms); each new
// session starts with a full read of the map, so it reconverges. Publishing
// (RELOAD / ROLLBACK) and SHOW FLEET run on the admin thread with their own
// io_context, never waiting for this thread.
#pragma once
#include <atomic>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "coord/fleet_records.hpp"
#include "proxy/fleet/etcd_client.hpp"
#include "proxy/fleet/fleet_fences.hpp"
#include "proxy/fleet/fleet_limits.hpp"
#include "proxy/fleet/fleet_roles.hpp"
#include "proxy/fleet/fleet_schema.hpp"
#include "proxy/ha/ha_fleet_link.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/maps/shard_map_manager.hpp"

namespace sp::proxy {

class FleetAgent final : public FleetLink {
 public:
  FleetAgent(ProxyContext& context, ShardMapManager& maps);
  ~FleetAgent() override;

  // Before start(): who follows the fleet's role changes (the HA coordinator).
  void attachHa(HaFleetFollower* follower) { ha_ = follower; }
  HaFleetLink* roles() { return roles_.get(); }
  SchemaFleetLink* schemaLink() { return schema_.get(); }
  // SET LIMIT in a fleet (admin thread): the rule put in etcd for every proxy.
  std::expected<void, std::string> publishLimit(const conf::StatementLimitRule& rule, const std::string& who) {
    return limits_->publish(rule, who);
  }
  void start();
  // Revokes the lease (the proxy leaves SHOW FLEET at once) and joins.
  void stop();

  // FleetLink (called by ShardMapManager under its mutex, on the admin thread).
  std::expected<int64_t, std::string> publish(const routing::CompiledShardMap& map, int64_t expected_revision,
                                              const std::string& who, const std::string& note,
                                              const coord::EtcdGuard* guard) override;
  void applied(const routing::CompiledShardMap& map, int64_t revision) override;

  // SHOW FLEET: every registered proxy, by name.
  std::expected<std::vector<coord::MemberRecord>, std::string> members();
  const std::string& name() const { return config_.name; }
  const conf::FleetConfig& config() const { return config_; }
  // The lease of the session in progress (0: none): a move's fence lives under it.
  int64_t lease() const { return context_.fleet_session.load() ? lease_.load() : 0; }
  // "connected (127.0.0.1:2379)" or "unreachable since ...: why".
  std::string state();

 private:
  awaitable<void> run();
  awaitable<std::string> session();
  awaitable<std::expected<int64_t, std::string>> acquireLease();
  awaitable<std::string> syncMap(int64_t& revision);
  // Reads the open fences (before the map: a lift seen here has its switch's map in the read after).
  awaitable<std::string> readFences(int64_t& revision, std::map<int64_t, FleetFences::Open>& open);
  void onFenceEvent(const coord::EtcdWatchEvent& event);
  // ha/ keys: read at a session's start (everything in force), then watched.
  awaitable<std::string> readHa();
  void onHaEvent(const coord::EtcdWatchEvent& event);
  void onRoleChange(const coord::EtcdKv& kv);
  void onTopology(const coord::EtcdKv& kv);
  // Claims ha/leader under this session's lease when nobody holds it.
  awaitable<void> campaign();
  awaitable<std::string> watch(int64_t start_revision);
  awaitable<std::string> keepAlive(int64_t lease);
  awaitable<std::string> checkWatch();
  awaitable<void> countMembers();
  awaitable<void> putMember();
  // member_ changed (agent thread): put it, serialized with other puts.
  void memberChanged();
  void setState(std::string state, bool healthy);

  ProxyContext& context_;
  ShardMapManager& maps_;
  conf::FleetConfig config_;
  EtcdClient client_;
  const std::string admin_address_;
  asio::io_context io_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> lease_{0};
  std::mutex state_mutex_;
  std::string state_ = "starting";
  bool healthy_ = false;
  // The record last put (agent thread only).
  coord::MemberRecord member_;
  bool member_put_running_ = false;
  bool member_dirty_ = false;
  int64_t last_checked_revision_ = 0;  // checkWatch (agent thread)
  int64_t seen_revision_ = 0;          // newest <prefix>/map revision read or watched, applied or refused
  std::shared_ptr<EtcdStream> watch_stream_;  // agent thread only; closed by stop()
  std::unique_ptr<FleetFences> fences_;       // agent thread only
  std::unique_ptr<FleetRoles> roles_;
  std::unique_ptr<FleetSchema> schema_;
  std::unique_ptr<FleetLimits> limits_;
  HaFleetFollower* ha_ = nullptr;
  int64_t held_change_ = 0;  // another proxy's role change this proxy holds for (agent thread)
};

}  // namespace sp::proxy
