// MoveCoordinator: the target's copied rows of moves that stopped before
// their switch while the target was down (target_cleanup.hpp). A sweep on
// the move thread finds the pending ones in the SQLite file (so a restart
// keeps them) and deletes them once the target answers: the moving keys'
// rows of the target table, planned again against the map in force so that
// rows the map routes to the target are never touched.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/maps/shard_map_store.hpp"
#include "proxy/move/move_coordinator.hpp"
#include "proxy/move/move_steps.hpp"

namespace sp::proxy {

namespace {
// How often the sweep looks: the figure that bounds the delay after the
// health monitor sees the target answer again.
constexpr std::chrono::milliseconds kSweepEvery{250};

std::string backendOf(const std::string& place) { return place.substr(0, place.find('.')); }
}  // namespace

awaitable<void> MoveCoordinator::sweepTargetCleanups() {
  asio::steady_timer timer(io_);
  for (;;) {
    timer.expires_after(kSweepEvery);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    const auto now = TargetCleanupSchedule::Clock::now();
    for (auto& record : pendingTargetCleanups()) {
      if (!cleanup_schedule_.due(record.id, now, targetUp(record))) continue;
      std::lock_guard lock(mutex_);
      startTargetCleanup(std::move(record));
    }
  }
}

// Pending, not being deleted now, and no move of the same table running
// (its own copy may be on the target table: a new run of the move deletes
// the old copy itself before copying).
std::vector<MoveRecord> MoveCoordinator::pendingTargetCleanups() {
  std::lock_guard lock(mutex_);
  std::vector<MoveRecord> out;
  if (!store_) return out;
  auto rows = store_->listWithTargetCleanup(TargetCleanup::kPending);
  if (!rows) return out;
  // A running move's own record is the newer word on it (running_ below);
  // one pending in memory but not yet stored is taken from there.
  for (const auto& [id, running] : running_) {
    const bool listed = std::any_of(rows->begin(), rows->end(), [&](const MoveRecord& r) { return r.id == id; });
    if (!listed && running->record.target_cleanup == TargetCleanup::kPending) rows->push_back(running->record);
  }
  for (auto& r : *rows) {
    if (auto it = running_.find(r.id); it != running_.end()) r = it->second->record;
    if (r.target_cleanup != TargetCleanup::kPending || clearing_.contains(r.id)) continue;
    bool busy = false;
    for (const auto& [id, running] : running_) {
      busy = busy || (running->active && running->record.request.table == r.request.table);
    }
    if (!busy) out.push_back(std::move(r));
  }
  return out;
}

std::optional<bool> MoveCoordinator::targetUp(const MoveRecord& record) const {
  auto health = context_.replica_health.load();
  if (!health) return std::nullopt;
  const ServerHealth* server = health->find(backendOf(record.target));
  if (!server || server->state == ServerState::kUnknown) return std::nullopt;
  if (server->state == ServerState::kDown) return false;
  return server->answered;
}

void MoveCoordinator::startTargetCleanup(MoveRecord record) {
  clearing_.insert(record.id);
  asio::co_spawn(io_, clearTargetOf(std::move(record)), asio::detached);
}

awaitable<void> MoveCoordinator::clearTargetOf(MoveRecord record) {
  const int64_t id = record.id;
  // The keys must still not be routed to the target table (the plan's
  // source is whatever the map in force says; its target must be the
  // move's): only then are the moving keys' rows there a leftover copy.
  std::string abandon;
  std::optional<routing::MovePlan> plan;
  if (auto map = context_.shard_map.load(); map) {
    auto planned = routing::planMove(*map, record.request, backendNames());
    if (!planned) {
      abandon = planned.error().code == routing::move_error::kAlreadyThere
                    ? "the map in force routes the moving keys to the target now"
                    : "the move no longer plans against the map in force (" + planned.error().message + ")";
    } else if (planned->target_backend + "." + planned->target_table != record.target) {
      abandon = "the map in force would move the keys to " + planned->target_backend + "." +
                planned->target_table + " now, not " + record.target + "; delete them by hand";
    } else {
      plan = std::move(*planned);
    }
  }
  std::string error = plan || !abandon.empty() ? "" : "no shard map in force";
  if (plan) {
    auto steps = makeBackendMoveSteps(context_, maps_, *plan, id);
    auto cleared = co_await steps->clearTarget();
    if (cleared) noteTargetCleared(record, utcNowText());
    else error = cleared.error();
  } else if (!abandon.empty()) {
    noteTargetCleanupAbandoned(record, abandon);
  }
  if (error.empty()) {
    cleanup_schedule_.forget(id);
    spdlog::info("move {} ({}): {}", id, record.what, record.message);
    save(record);
  } else {
    cleanup_schedule_.failed(id, TargetCleanupSchedule::Clock::now());
    spdlog::debug("move {}: the target's copied rows not deleted yet: {}", id, error);
  }
  std::lock_guard lock(mutex_);
  clearing_.erase(id);
  if (error.empty()) cleanup_errors_.erase(id);
  else cleanup_errors_[id] = error;
}

AdminReply MoveCoordinator::cleanupTargetNow(const MoveRecord& record) {
  if (clearing_.contains(record.id)) return AdminOk{};  // being deleted now: SHOW MOVES tells when done
  // The operator's try does not wait for the backoff nor the health monitor.
  startTargetCleanup(record);
  return AdminOk{};
}

AdminReply MoveCoordinator::abandonTargetCleanup(MoveRecord record) {
  if (clearing_.contains(record.id)) {
    return AdminError{routing::move_error::kWrongState, "HY000",
                      fmt::format("shardproxy admin: move {}'s copied rows are being deleted now", record.id)};
  }
  noteTargetCleanupAbandoned(record, "CANCEL MOVE stopped the retries; delete them by hand");
  if (auto it = running_.find(record.id); it != running_.end()) it->second->record = record;
  if (store_) {
    if (auto saved = store_->save(record); !saved) spdlog::error("move {}: not saved: {}", record.id, saved.error());
  }
  return AdminOk{};
}

}  // namespace sp::proxy
