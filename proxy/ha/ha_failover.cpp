// HaCoordinator, FAILOVER: a replica promoted after its primary died (docs/availability.md, "Failover").
#include "proxy/ha/ha_coordinator.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/core/gtid.hpp"
#include "proxy/ha/replica_monitor.hpp"
#include "proxy/ha/replication_sql.hpp"
#include "proxy/ha/server_control.hpp"
#include "proxy/ha/topology_store.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;
using namespace role_change;

awaitable<AdminReply> HaCoordinator::failover(const std::string& backend, std::string target, const std::string& who) {
  const auto& ha = context_.config().ha;
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("FAILOVER: unknown backend '" + backend + "'");
  auto health = context_.replica_health.load();
  if (!health || group.replicas.empty()) co_return refused("FAILOVER: backend " + backend + " has no replicas");
  const ServerHealth* primary = health->find(group.primary);
  if (primary != nullptr && primary->state != ServerState::kDown) {
    co_return refused(fmt::format("FAILOVER: the primary {} of backend {} is {}, not down (its probes must fail for "
                                  "ha.failure_timeout_ms, {} ms); for a planned change use SWITCHOVER BACKEND {}",
                                  group.primary, backend, serverStateName(primary->state), ha.failure_timeout_ms,
                                  backend));
  }
  if (!target.empty() && std::find(group.replicas.begin(), group.replicas.end(), target) == group.replicas.end()) {
    co_return refused(fmt::format("FAILOVER: '{}' is not a replica of backend {} (replicas: {})", target, backend,
                                  joinServerNames(group.replicas)));
  }
  const auto timeout = std::chrono::milliseconds(ha.probe_timeout_ms);
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(ha.switchover_timeout_ms);
  auto remaining = [&] { return leftUntil(deadline); };
  // Every reachable replica and what it has received from the dead primary.
  std::vector<Control> replicas;
  std::vector<std::string> received;
  std::vector<std::string> unreachable;
  for (const auto& name : group.replicas) {
    Control c{name, *serverLogin(*config, name), nullptr};
    if (auto e = co_await connect(c, context_); !e.empty()) {
      unreachable.push_back(name);
      spdlog::warn("ha: failover: {}", e);
      continue;
    }
    auto io_pos = co_await receivedPosition(c, timeout);
    auto applied = co_await scalar(c, kCurrentPosition, timeout);
    if (!io_pos || !applied) {
      unreachable.push_back(name);
      continue;
    }
    // What it will have once its relay log is applied: the received
    // position, or the applied one when it received nothing more.
    received.push_back(io_pos->empty() || positionCoversAll(*applied, *io_pos) ? *applied : *io_pos);
    replicas.push_back(std::move(c));
  }
  if (replicas.empty()) co_return refused("FAILOVER: no replica of backend " + backend + " answers");
  size_t best = 0;
  for (size_t i = 1; i < replicas.size(); ++i) {
    if (!positionCoversAll(received[best], received[i])) best = i;
  }
  if (!target.empty()) {
    auto it = std::find_if(replicas.begin(), replicas.end(), [&](const Control& c) { return c.name == target; });
    if (it == replicas.end()) co_return refused("FAILOVER: replica " + target + " does not answer");
    const size_t chosen = static_cast<size_t>(it - replicas.begin());
    if (!positionCoversAll(received[chosen], received[best])) {
      co_return refused(fmt::format("FAILOVER: {} has received less ({}) than {} ({}); promoting it would lose "
                                    "those writes: name {} or leave TO out", target, received[chosen],
                                    replicas[best].name, received[best], replicas[best].name));
    }
    best = chosen;
  }
  Control& promoted = replicas[best];
  target = promoted.name;
  auto logs = co_await sql(promoted, kPromotable, timeout);
  if (!promotable(logs)) {
    co_return refused(fmt::format("FAILOVER: {} needs log_bin=ON and log_slave_updates=ON to become the primary",
                                  target));
  }

  switching_.insert(backend);
  holdAll(backend, deadline);
  auto give_up = [&](std::string why) -> AdminReply {
    switching_.erase(backend);
    releaseAll(backend);
    spdlog::error("ha: failover of backend {} to {} failed: {}", backend, target, why);
    return AdminError{kAborted, "HY000",
                      fmt::format("shardproxy admin: FAILOVER of backend {} to {} failed: {}", backend, target, why)};
  };
  // Apply what it received, then stop replicating and take writes.
  const std::string wait_sql = gtidWaitSql(received[best], static_cast<uint32_t>(remaining().count()));
  auto waited = co_await scalar(promoted, wait_sql, remaining() + timeout);
  if (!waited) co_return give_up(waited.error());
  if (*waited != "0") co_return give_up("its relay log was not applied within ha.switchover_timeout_ms");
  static constexpr std::string_view kPromote[] = {kStopReplication, kForgetSource, kSetWritable};
  for (std::string_view step : kPromote) {
    auto done = co_await sql(promoted, step, remaining() + timeout);
    if (!done) co_return give_up(done.error());
  }
  auto position = co_await scalar(promoted, kCurrentPosition, timeout);
  // What the old primary had when last seen, against what the new one has.
  std::string loss = primary ? failoverLossFromLastProbe(*primary) : "unknown";
  if (primary && position) {
    if (auto missing = positionShortfall(*position, primary->gtid_current_pos); missing && *missing > 0) {
      loss = fmt::format("{} transactions the old primary had at its last probe are missing ({}); {}", *missing,
                         primary->gtid_current_pos, loss);
    }
  }

  GroupTopology next = group;
  next.primary = target;
  next.replicas.clear();
  next.fenced.push_back(group.primary);
  for (auto& c : replicas) {
    if (c.name != target) next.replicas.push_back(c.name);
  }
  for (const auto& name : unreachable) next.fenced.push_back(name);
  next.changed_unix_ms = unixMillis();
  next.change = fmt::format("failover {} -> {} ({}); lost writes: {}", group.primary, target, who, loss);
  next.promoted_at = position.value_or("");
  // A statement still on its way to the old primary (hung, not dead) must
  // fail now: acknowledged later by the fenced server, it would be a write
  // the new primary never has.
  const std::string stored = publish(next, true, true);
  switching_.erase(backend);
  releaseAll(backend);
  const double held_ms = millisSince(started);

  std::vector<std::string> problems;
  for (auto& c : replicas) {
    if (c.name == target) continue;
    if (auto e = co_await repoint(c, *config, promoted.login.address, "slave_pos", context_); !e.empty()) {
      problems.push_back(e);
    }
  }
  for (const auto& name : unreachable) {
    problems.push_back(name + " did not answer: fenced; REJOIN BACKEND " + backend + " SERVER " + name);
  }
  if (!stored.empty()) problems.push_back(stored);
  for (const auto& p : problems) spdlog::warn("ha: failover of backend {}: {}", backend, p);
  spdlog::warn("ha: failover of backend {}: {} -> {} ({}); lost writes: {}", backend, group.primary, target, who, loss);
  LocalResult result;
  result.columns = {"backend", "old_primary", "new_primary", "position", "held_ms", "lost_writes", "problems"};
  std::string problem_text;
  for (const auto& p : problems) problem_text += (problem_text.empty() ? "" : "; ") + p;
  result.rows.push_back({backend, group.primary, target, position.value_or(""), fmt::format("{:.1f}", held_ms), loss,
                         problem_text});
  co_return result;
}

}  // namespace sp::proxy
