#include "proxy/ha/ha_coordinator.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/core/gtid.hpp"
#include "proxy/ha/replica_monitor.hpp"
#include "proxy/ha/replication_sql.hpp"
#include "proxy/ha/role_change_common.hpp"
#include "proxy/ha/server_control.hpp"
#include "proxy/ha/topology_store.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;
using namespace role_change;

HaCoordinator::HaCoordinator(ProxyContext& context) : context_(context) {}

HaCoordinator::~HaCoordinator() { stop(); }

void HaCoordinator::loadTopology() {
  std::vector<GroupTopology> saved;
  if (!context_.config().cache_path.empty()) {
    auto store = TopologyStore::open(context_.config().cache_path);
    if (!store) {
      spdlog::error("ha: the topology cache {} cannot be opened ({}): the configuration's roles apply and role "
                    "changes are not kept across restarts", context_.config().cache_path, store.error());
    } else {
      store_ = std::move(*store);
      auto rows = store_->load();
      if (rows) saved = std::move(*rows);
      else spdlog::error("ha: {}", rows.error());
    }
  }
  std::vector<std::string> warnings;
  auto topology = std::make_shared<Topology>(restoreTopology(context_.config(), saved, warnings));
  for (const auto& w : warnings) spdlog::warn("ha: {}", w);
  for (const auto& g : topology->groups) {
    if (g.changed_unix_ms != 0) {
      spdlog::info("ha: backend {}: primary {} (kept from {}), replicas [{}], fenced [{}]", g.backend, g.primary,
                   g.change, joinServerNames(g.replicas), joinServerNames(g.fenced));
    }
  }
  context_.topology.store(std::move(topology));
}

void HaCoordinator::start(std::vector<PoolHost*> hosts) {
  hosts_ = std::move(hosts);
  ReplicaMonitor::Hooks hooks;
  hooks.switching = [this](const std::string& backend) { return switching_.contains(backend); };
  hooks.probed = [this](const ServerHealth& server) { onProbe(server); };
  monitor_ = std::make_unique<ReplicaMonitor>(io_, context_, std::move(hooks));
  monitor_->start();
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

void HaCoordinator::backendsChanged(std::vector<conf::BackendConfig> added, std::vector<std::string> removed) {
  asio::post(io_, [this, added = std::move(added), removed = std::move(removed)] {
    if (!monitor_) return;
    for (const auto& name : removed) monitor_->retireBackend(name);  // a replaced one first: same name
    for (const auto& backend : added) monitor_->addBackend(backend);
  });
}

void HaCoordinator::stop() {
  if (monitor_) monitor_->stop();
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

awaitable<AdminReply> HaCoordinator::execute(HaCommand command, std::string who) {
  // (Arguments as lvalues: GCC 12 destroys temporaries passed to a coroutine twice.)
  co_return co_await asio::co_spawn(io_, run(command, who), asio::use_awaitable);
}

awaitable<AdminReply> HaCoordinator::run(HaCommand command, std::string who) {
  if (command.kind == HaCommandKind::kShowTopology) co_return showTopology();
  HaFleetLink* fleet = fleet_.load();
  if (context_.config().fleet && fleet == nullptr) co_return refused("the fleet agent has not started yet; retry");
  if (busy_) co_return refused("another SWITCHOVER / FAILOVER / REJOIN is running; one at a time");
  busy_ = true;
  AdminReply reply;
  if (fleet) reply = co_await runInFleet(*fleet, command, who);
  else reply = co_await runCommand(command, who);
  busy_ = false;
  co_return reply;
}

awaitable<AdminReply> HaCoordinator::runCommand(const HaCommand& command, const std::string& who) {
  switch (command.kind) {
    case HaCommandKind::kSwitchover: co_return co_await switchover(command.backend, command.server, who);
    case HaCommandKind::kFailover: co_return co_await failover(command.backend, command.server, who);
    case HaCommandKind::kRejoin: co_return co_await rejoin(command.backend, command.server, who);
    case HaCommandKind::kShowTopology: break;
  }
  co_return showTopology();
}

AdminReply HaCoordinator::showTopology() const {
  LocalResult result;
  result.columns = {"backend", "primary", "address", "replicas", "fenced", "version", "changed_at_unix_ms", "change"};
  auto topology = context_.topology.load();
  if (!topology) return result;
  for (const auto& g : topology->groups) {
    std::string address;
    if (auto primary = primaryPoolConfig(context_.config(), *topology, g.backend)) {
      address = conf::formatHostPort(primary->address);
    }
    result.rows.push_back({g.backend, g.primary, address, joinServerNames(g.replicas), joinServerNames(g.fenced),
                           std::to_string(topology->version), std::to_string(g.changed_unix_ms),
                           g.change.empty() ? "as configured" : g.change});
  }
  return result;
}

const conf::BackendConfig* HaCoordinator::groupOf(const std::string& backend, GroupTopology& group) const {
  const conf::BackendConfig* config = context_.config().findBackend(backend);
  auto topology = context_.topology.load();
  const GroupTopology* found = topology ? topology->find(backend) : nullptr;
  if (config == nullptr || found == nullptr) return nullptr;
  group = *found;
  return config;
}

bool HaCoordinator::holdAll(const std::string& backend, Clock::time_point until) {
  bool ok = true;
  for (auto* h : hosts_) ok = h->holdBackend(backend, until) && ok;
  return ok;
}

void HaCoordinator::releaseAll(const std::string& backend) {
  for (auto* h : hosts_) h->releaseBackend(backend);
}

std::optional<uint32_t> HaCoordinator::busyTotal(const std::string& backend) {
  uint32_t total = 0;
  for (auto* h : hosts_) {
    auto busy = h->busyConnections(backend);
    if (!busy) return std::nullopt;
    total += *busy;
  }
  return total;
}

std::string HaCoordinator::publish(GroupTopology group, bool primary_changed, bool sever) {
  auto current = context_.topology.load();
  auto next = std::make_shared<Topology>(current ? *current : topologyFromConfig(context_.config()));
  ++next->version;
  if (auto* g = next->find(group.backend)) *g = group;
  else next->groups.push_back(group);
  context_.topology.store(next);
  std::string problem;
  if (store_) problem = store_->save(group);
  auto primary = primaryPoolConfig(context_.config(), *next, group.backend);
  auto replicas = replicaLogins(context_.config(), *next, group.backend);
  uint32_t closed = 0;
  for (auto* h : hosts_) {
    auto n = h->repointBackend(group.backend, primary_changed && primary ? &*primary : nullptr, replicas, sever);
    if (n) closed += *n;
  }
  // New pools (a replica's) start unmarked: servers still down are marked again.
  for (const auto& mark : down_marks_.marked()) sendMark(mark);
  if (closed > 0) {
    spdlog::warn("ha: backend {}: {} sessions idle on a pinned connection to the old primary were closed (their "
                 "connection-bound state lived there)", group.backend, closed);
  }
  spdlog::warn("ha: backend {}: primary {}, replicas [{}], fenced [{}] ({})", group.backend, group.primary,
               joinServerNames(group.replicas), joinServerNames(group.fenced), group.change);
  return problem;
}

// ---- automatic failover ----

void HaCoordinator::sendMark(const DownMark& mark) {
  for (auto* h : hosts_) h->markServer(mark.address, mark.reason);
}

void HaCoordinator::onProbe(const ServerHealth& server) {
  const auto& ha = context_.config().ha;
  // First the pools: statements stuck on a server that stopped answering
  // fail now; a failover (below) then holds the new ones and repoints.
  if (auto mark = down_marks_.observe(server, ha)) {
    if (mark->reason.empty()) {
      spdlog::info("ha: server {} ({}) answers again: its pools lend again", server.name, server.address);
    } else {
      spdlog::warn("ha: server {} ({}) of backend {} is down ({}): its statements in flight are cut and new ones "
                   "refused with 9001", server.name, server.address, server.backend, mark->reason);
    }
    sendMark(*mark);
  }
  if (!ha.auto_failover || !server.primary || server.state != ServerState::kDown) return;
  if (busy_) return;
  if (GroupTopology group; groupOf(server.backend, group) == nullptr || group.replicas.empty()) {
    return;  // nothing to promote: the server's return ends the outage
  }
  // In a fleet only the proxy holding ha/leader decides (an election, not a race).
  HaFleetLink* fleet = fleet_.load();
  if (context_.config().fleet && (fleet == nullptr || !fleet->leads())) return;
  const int64_t now = unixMillis();
  auto& last = auto_attempted_[server.backend];
  // One attempt per failure_timeout_ms: a group with no replica to promote
  // is not hammered, and a failed attempt is retried.
  if (last != 0 && now - last < static_cast<int64_t>(ha.failure_timeout_ms)) return;
  last = now;
  spdlog::warn("ha: the primary {} of backend {} has not answered for ha.failure_timeout_ms ({} ms): failing over",
               server.name, server.backend, ha.failure_timeout_ms);
  HaCommand command;
  command.kind = HaCommandKind::kFailover;
  command.backend = server.backend;
  asio::co_spawn(io_, [this, command]() -> awaitable<void> {
    std::string who = "auto_failover";
    if (auto* f = fleet_.load()) who += " on " + f->proxyName();
    auto reply = co_await run(command, who);
    if (auto* e = std::get_if<AdminError>(&reply)) spdlog::error("ha: automatic failover: {}", e->message);
  }, asio::detached);
}

}  // namespace sp::proxy
