// HaCoordinator in a fleet (docs/availability.md, "In a fleet"): a role
// change decided here goes through etcd (HaFleetLink), and the changes other
// proxies decide are held for and applied here (HaFleetFollower).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "proxy/ha/ha_coordinator.hpp"
#include "proxy/ha/role_change_common.hpp"

namespace sp::proxy {

using role_change::Clock;
using role_change::kDrainPoll;
using role_change::refused;

namespace {

const char* changeKind(HaCommandKind kind) {
  switch (kind) {
    case HaCommandKind::kSwitchover: return "switchover";
    case HaCommandKind::kFailover: return "failover";
    default: return "rejoin";
  }
}

// Appends `problem` to a command's result (its last column, "problems").
void addProblem(AdminReply& reply, const std::string& problem) {
  auto* result = std::get_if<LocalResult>(&reply);
  if (result == nullptr || result->rows.empty() || result->columns.empty() || result->columns.back() != "problems") {
    return;
  }
  auto& cell = result->rows.front().back();
  std::string text = cell.value_or("");
  cell = text.empty() ? problem : text + "; " + problem;
}

}  // namespace

awaitable<AdminReply> HaCoordinator::runInFleet(HaFleetLink& fleet, HaCommand command, std::string who) {
  const auto& fleet_config = *context_.config().fleet;
  const std::string kind = changeKind(command.kind);
  std::string verb = kind;
  std::transform(verb.begin(), verb.end(), verb.begin(), [](unsigned char c) { return std::toupper(c); });
  // The others hold for the whole change at most: its own bound, the wait for their acknowledgements, a margin.
  const uint32_t hold_ms = context_.config().ha.switchover_timeout_ms + fleet_config.fence_ack_timeout_ms + 1000;
  auto ticket = co_await fleet.begin(command.backend, kind, who, hold_ms);
  if (!ticket) co_return refused(fmt::format("{} BACKEND {}: {}; nothing was changed", verb, command.backend, ticket.error()));
  // Decide on the fleet's roles, not on what this proxy saw last.
  if (ticket->fleet_topology) applyFleetRoles(*ticket->fleet_topology, "the fleet's roles, read before a change");
  if (command.kind != HaCommandKind::kRejoin) {
    auto held = co_await fleet.awaitHolds(*ticket, Clock::now() + std::chrono::milliseconds(fleet_config.fence_ack_timeout_ms));
    if (!held) {
      co_await fleet.end(*ticket);
      co_return refused(fmt::format("{} BACKEND {}: {}; nothing was changed", verb, command.backend, held.error()));
    }
  }
  auto before = context_.topology.load();
  AdminReply reply = co_await runCommand(command, who);
  auto after = context_.topology.load();
  if (after && after != before) {
    auto published = co_await fleet.publish(*after, *ticket);
    if (!published) {
      const std::string problem = fmt::format(
          "the new roles are in force on the servers and on this proxy, but not published to the fleet ({}): the other "
          "proxies keep the old roles and, once this change's claim expires with this proxy's lease, fence the new "
          "primary read-only (never two writers, but writes fail): repeat the change when etcd answers",
          published.error());
      spdlog::error("ha: {} of backend {}: {}", kind, command.backend, problem);
      addProblem(reply, problem);
    }
  }
  co_await fleet.end(*ticket);
  co_return reply;
}

void HaCoordinator::applyFleetRoles(const Topology& topology, const std::string& why) {
  for (const auto& g : topology.groups) {
    const conf::BackendConfig* config = context_.config().findBackend(g.backend);
    if (config == nullptr) {
      spdlog::warn("ha: the fleet's roles name backend {}, which this proxy's configuration lacks: ignored", g.backend);
      continue;
    }
    auto known = [&](const std::string& server) { return isServerOf(*config, server); };
    if (!known(g.primary) || !std::all_of(g.replicas.begin(), g.replicas.end(), known) ||
        !std::all_of(g.fenced.begin(), g.fenced.end(), known)) {
      spdlog::error("ha: the fleet's roles of backend {} name servers this proxy's configuration lacks (primary {}, "
                    "replicas [{}], fenced [{}]): ignored; give every proxy the same backends",
                    g.backend, g.primary, joinServerNames(g.replicas), joinServerNames(g.fenced));
      continue;
    }
    auto current = context_.topology.load();
    const GroupTopology* local = current ? current->find(g.backend) : nullptr;
    if (local && local->primary == g.primary && local->replicas == g.replicas && local->fenced == g.fenced &&
        local->promoted_at == g.promoted_at) {
      continue;
    }
    const bool primary_changed = local == nullptr || local->primary != g.primary;
    spdlog::warn("ha: backend {}: {} ({})", g.backend, why, g.change);
    // A new primary: statements still on their way to the old one fail
    // rather than be acknowledged by a server the group left behind.
    if (auto problem = publish(g, primary_changed, primary_changed); !problem.empty()) spdlog::error("ha: {}", problem);
    if (fleet_held_.contains(g.backend)) endFleetHold(g.backend);
  }
}

void HaCoordinator::endFleetHold(const std::string& backend) {
  fleet_held_.erase(backend);
  switching_.erase(backend);
  releaseAll(backend);
}

void HaCoordinator::fleetChangeBegun(std::string backend, std::string kind, std::string proxy, int64_t change_revision,
                                     uint32_t hold_ms) {
  asio::post(io_, [this, backend, kind, proxy, change_revision, hold_ms] {
    if (kind == "rejoin") return;  // the primary stays: nothing to hold
    if (context_.config().findBackend(backend) == nullptr) return;
    fleet_held_[backend] = change_revision;
    // Also keeps this proxy's monitor from fencing the server being promoted.
    switching_.insert(backend);
    const auto until = Clock::now() + std::chrono::milliseconds(hold_ms);
    holdAll(backend, until);
    spdlog::warn("ha: backend {}: holding its statements for proxy {}'s {} (at most {} ms)", backend, proxy, kind,
                 hold_ms);
    auto still = [this, backend, change_revision] {
      auto it = fleet_held_.find(backend);
      return it != fleet_held_.end() && it->second == change_revision;
    };
    asio::co_spawn(io_, [this, backend, kind, change_revision, until, still]() -> awaitable<void> {
      if (kind == "switchover") {
        // Acknowledged once nothing of this proxy runs on the old primary:
        // it is made read-only next. (A failover's old primary is gone; its
        // statements are cut when the new roles arrive.)
        for (;;) {
          if (!still()) co_return;
          auto busy = busyTotal(backend);
          if (busy && *busy == 0) break;
          if (Clock::now() >= until) co_return;
          asio::steady_timer poll(io_, kDrainPoll);
          co_await poll.async_wait(kNoThrow);
        }
      }
      if (auto* link = fleet_.load(); link && still()) co_await link->acknowledge(change_revision);
      // The hold ends with the change, or at its bound if the end never arrives.
      asio::steady_timer bound(io_, until);
      co_await bound.async_wait(kNoThrow);
      if (still()) {
        spdlog::warn("ha: backend {}: the fleet's role change {} did not end within its hold; released", backend,
                     change_revision);
        endFleetHold(backend);
      }
    }, asio::detached);
  });
}

void HaCoordinator::fleetChangeEnded(int64_t change_revision) {
  asio::post(io_, [this, change_revision] {
    std::vector<std::string> ended;
    for (const auto& [backend, revision] : fleet_held_) {
      if (revision == change_revision) ended.push_back(backend);
    }
    for (const auto& b : ended) endFleetHold(b);
  });
}

void HaCoordinator::fleetTopology(Topology topology, int64_t revision) {
  asio::post(io_, [this, topology = std::move(topology), revision] {
    if (revision <= fleet_topology_revision_) return;
    fleet_topology_revision_ = revision;
    applyFleetRoles(topology, "roles published by the fleet");
  });
}

}  // namespace sp::proxy
