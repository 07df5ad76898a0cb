// HaCoordinator, SWITCHOVER: a planned change of primary (docs/availability.md, "Switchover").
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

awaitable<AdminReply> HaCoordinator::switchover(const std::string& backend, std::string target,
                                                const std::string& who) {
  const auto& ha = context_.config().ha;
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("SWITCHOVER: unknown backend '" + backend + "'");
  auto health = context_.replica_health.load();
  if (!health) co_return refused("SWITCHOVER: backend " + backend + " lists no replicas");
  const ServerHealth* primary = health->find(group.primary);
  if (primary == nullptr || !primary->answered) {
    co_return refused(fmt::format("SWITCHOVER: the primary {} of backend {} does not answer its probes: use "
                                  "FAILOVER BACKEND {}", group.primary, backend, backend));
  }
  if (target.empty()) {
    // The replica that has applied the most, among those that qualify.
    for (const auto& name : group.replicas) {
      const ServerHealth* s = health->find(name);
      if (s == nullptr || !servesReads(*s)) continue;
      const ServerHealth* best = target.empty() ? nullptr : health->find(target);
      if (best == nullptr || !positionCoversAll(best->gtid_current_pos, s->gtid_current_pos)) target = name;
    }
    if (target.empty()) co_return refused("SWITCHOVER: backend " + backend + " has no replica that is up and current");
  }
  if (std::find(group.replicas.begin(), group.replicas.end(), target) == group.replicas.end()) {
    co_return refused(fmt::format("SWITCHOVER: '{}' is not a replica of backend {} (replicas: {})", target, backend,
                                  group.replicas.empty() ? "none" : joinServerNames(group.replicas)));
  }
  const ServerHealth* candidate = health->find(target);
  if (candidate == nullptr || !candidate->answered) {
    co_return refused(fmt::format("SWITCHOVER: replica {} does not answer its probes", target));
  }
  if (candidate->state != ServerState::kUp) {
    co_return refused(fmt::format("SWITCHOVER: replica {} is {} ({}); it must replicate and be within "
                                  "ha.max_replica_lag_ms ({} ms)", target, serverStateName(candidate->state),
                                  candidate->last_error.empty() ? "no error" : candidate->last_error,
                                  ha.max_replica_lag_ms));
  }
  if (!context_.write_hold.empty()) {
    co_return refused("SWITCHOVER: an online move is running (SHOW MOVES); switch after it has ended");
  }

  Control old_primary{group.primary, *serverLogin(*config, group.primary), nullptr};
  Control promoted{target, *serverLogin(*config, target), nullptr};
  std::vector<Control> others;
  for (const auto& name : group.replicas) {
    if (name != target) others.push_back(Control{name, *serverLogin(*config, name), nullptr});
  }
  const auto timeout = std::chrono::milliseconds(ha.probe_timeout_ms);
  for (Control* c : {&old_primary, &promoted}) {
    if (auto e = co_await connect(*c, context_); !e.empty()) co_return refused("SWITCHOVER: cannot connect to " + e);
  }
  auto logs = co_await sql(promoted, kPromotable, timeout);
  if (!logs) co_return refused("SWITCHOVER: " + logs.error());
  if (!promotable(logs)) {
    co_return refused(fmt::format("SWITCHOVER: {} needs log_bin=ON and log_slave_updates=ON to become the primary "
                                  "(its replicas follow its binary log)", target));
  }
  for (auto& c : others) {
    if (auto e = co_await connect(c, context_); !e.empty()) spdlog::warn("ha: switchover: {}", e);
  }

  // From here on, statements to the backend's primary wait.
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(ha.switchover_timeout_ms);
  auto remaining = [&] { return leftUntil(deadline); };
  switching_.insert(backend);
  holdAll(backend, deadline);
  bool made_read_only = false;
  auto abort = [&](std::string why) -> awaitable<AdminReply> {
    if (made_read_only) {
      auto undone = co_await sql(old_primary, kSetWritable, timeout);
      if (!undone) why += "; and read_only could not be turned off again on " + group.primary + ": " + undone.error();
    }
    switching_.erase(backend);
    releaseAll(backend);
    spdlog::error("ha: switchover of backend {} to {} abandoned after {:.0f} ms: {}", backend, target,
                  millisSince(started), why);
    co_return AdminError{kAborted, "HY000",
                         fmt::format("shardproxy admin: SWITCHOVER of backend {} to {} abandoned, nothing changed: {}",
                                     backend, target, why)};
  };

  // 1. Drain: no statement or transaction is running on the old primary.
  uint32_t busy = 0;
  for (;;) {
    auto b = busyTotal(backend);
    busy = b.value_or(1);
    if (busy == 0) break;
    if (Clock::now() + kDrainPoll >= deadline) {
      const std::string why = fmt::format("{} statements or transactions on {} were still running after "
                                          "ha.switchover_timeout_ms ({} ms)", busy, group.primary,
                                          ha.switchover_timeout_ms);
      co_return co_await abort(why);
    }
    asio::steady_timer pause(io_);
    pause.expires_after(kDrainPoll);
    co_await pause.async_wait(kNoThrow);
  }
  const double drained_ms = millisSince(started);

  // 2. The old primary takes no more writes; its last position.
  auto ro = co_await sql(old_primary, kSetReadOnly, remaining());
  if (!ro) co_return co_await abort(ro.error());
  made_read_only = true;
  auto final_position = co_await scalar(old_primary, kBinlogPosition, remaining());
  if (!final_position) co_return co_await abort(final_position.error());

  // 3. The replica applies everything up to it.
  const auto wait_ms = static_cast<uint32_t>(remaining().count());
  const std::string wait_sql = gtidWaitSql(*final_position, wait_ms);
  auto waited = co_await scalar(promoted, wait_sql, remaining() + timeout);
  if (!waited) co_return co_await abort(waited.error());
  if (*waited != "0") {
    const std::string why = fmt::format("{} had not applied {}'s last position {} within ha.switchover_timeout_ms",
                                        target, group.primary, *final_position);
    co_return co_await abort(why);
  }
  const double caught_up_ms = millisSince(started);

  // 4. Promote. Past this point the switch goes through.
  static constexpr std::string_view kPromote[] = {kStopReplication, kForgetSource, kSetWritable};
  for (std::string_view step : kPromote) {
    auto done = co_await sql(promoted, step, remaining() + timeout);
    if (!done) {
      if (step != kStopReplication) {
        // Half promoted: replication stopped. Put it back before undoing.
        co_await sql(promoted, kStartReplication, timeout);
      }
      co_return co_await abort(done.error());
    }
  }

  // 5. The new roles, then the pools follow, then the held statements go on.
  GroupTopology next = group;
  next.primary = target;
  next.replicas.clear();
  for (const auto& name : group.replicas) {
    if (name != target) next.replicas.push_back(name);
  }
  next.replicas.push_back(group.primary);
  next.changed_unix_ms = unixMillis();
  next.change = fmt::format("switchover {} -> {} ({})", group.primary, target, who);
  next.promoted_at = *final_position;
  const std::string stored = publish(next, true);
  switching_.erase(backend);
  releaseAll(backend);
  const double held_ms = millisSince(started);

  // 6. The old primary and the other replicas follow the new primary (after
  //    the release: clients do not wait for this).
  std::vector<std::string> problems;
  if (auto e = co_await repoint(old_primary, *config, promoted.login.address, "current_pos", context_); !e.empty()) {
    problems.push_back(e);
  }
  for (auto& c : others) {
    if (!c.conn) {
      problems.push_back(c.name + ": not reachable; repoint it with REJOIN BACKEND " + backend + " SERVER " + c.name);
    } else if (auto e = co_await repoint(c, *config, promoted.login.address, "slave_pos", context_); !e.empty()) {
      problems.push_back(e);
    }
  }
  if (!stored.empty()) problems.push_back(stored + " (the new roles hold until a restart)");
  for (const auto& p : problems) spdlog::warn("ha: switchover of backend {}: {}", backend, p);
  spdlog::warn("ha: switchover of backend {}: {} -> {} at {} ({}); statements held {:.1f} ms", backend, group.primary,
               target, *final_position, who, held_ms);

  LocalResult result;
  result.columns = {"backend", "old_primary", "new_primary", "position", "drained_ms", "caught_up_ms", "held_ms",
                    "problems"};
  std::string problem_text;
  for (const auto& p : problems) problem_text += (problem_text.empty() ? "" : "; ") + p;
  result.rows.push_back({backend, group.primary, target, *final_position, fmt::format("{:.1f}", drained_ms),
                         fmt::format("{:.1f}", caught_up_ms), fmt::format("{:.1f}", held_ms), problem_text});
  co_return result;
}

}  // namespace sp::proxy
