#include "proxy/move/move_coordinator.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/move/move_steps.hpp"
#include "proxy/maps/shard_map_manager.hpp"

namespace sp::proxy {

namespace {

AdminError moveError(uint16_t code, std::string message) { return AdminError{code, "HY000", std::move(message)}; }

std::string figure(double v, int decimals = 1) { return fmt::format("{:.{}f}", v, decimals); }

// Two moves conflict when they move rows of the same logical table that
// overlap: simplest safe rule, one unfinished move per table.
bool sameTable(const MoveRecord& r, const routing::MoveRequest& q) { return r.request.table == q.table; }

}  // namespace

MoveCoordinator::MoveCoordinator(ProxyContext& context, ShardMapManager& maps) : context_(context), maps_(maps) {}

MoveCoordinator::~MoveCoordinator() { stop(); }

std::vector<std::string> MoveCoordinator::backendNames() const {
  std::vector<std::string> names;
  for (const auto& b : context_.config().backends) names.push_back(b.name);
  return names;
}

MoveSettings MoveCoordinator::settings() const {
  const auto& m = context_.config().moves;
  MoveSettings s;
  s.drain_timeout = std::chrono::milliseconds(m.drain_timeout_ms);
  s.cutover_attempts = m.cutover_attempts;
  s.cutover_lag_bytes = m.cutover_lag_bytes;
  s.catchup_rounds = m.catchup_rounds;
  return s;
}

void MoveCoordinator::start() {
  const auto& m = context_.config().moves;
  context_.write_hold.setLimits({std::chrono::milliseconds(m.hold_timeout_ms), m.hold_max_waiting});
  {
    std::lock_guard lock(mutex_);
    auto store = MoveStore::open(context_.config().cache_path);
    if (store) store_ = std::move(*store);
    else store_problem_ = store.error();
  }
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
  resume();
  asio::co_spawn(io_, sweepTargetCleanups(), asio::detached);
}

void MoveCoordinator::stop() {
  // Moves are abandoned where they are (not cancelled): their saved state
  // makes the next start resume them.
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void MoveCoordinator::save(const MoveRecord& record) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(record.id);
  if (it != running_.end()) it->second->record = record;
  if (!store_) return;
  MoveRecord copy = record;
  if (auto saved = store_->save(copy); !saved) spdlog::error("move {}: not saved: {}", record.id, saved.error());
}

void MoveCoordinator::launch(MoveRecord record, routing::MovePlan plan, bool cleanup_only) {
  auto running = std::make_shared<Running>();
  running->record = std::move(record);
  running->watch = context_.write_hold.watch(plan.keys, plan.source_table);
  running->steps = makeBackendMoveSteps(context_, maps_, plan, running->record.id);
  running->active = true;
  // The machine works on a record of its own; save() copies it to running_.
  auto machine_record = std::make_shared<MoveRecord>(running->record);
  running->machine = std::make_unique<MoveMachine>(*machine_record, *running->steps, context_.write_hold,
                                                   running->watch, settings(),
                                                   [this](const MoveRecord& r) { save(r); });
  running_[running->record.id] = running;
  auto* machine = running->machine.get();
  // Posted, never run inline: launch() runs under mutex_, and on the move
  // thread itself (the hot-key policy starts moves there) co_spawn would run
  // the machine at once, whose first save() takes mutex_ again.
  asio::post(io_, [this, running, machine, machine_record, cleanup_only] {
    asio::co_spawn(
        io_,
        [this, running, machine, machine_record, cleanup_only]() -> awaitable<void> {
          if (cleanup_only) co_await machine->cleanup();
          else co_await machine->run();
          spdlog::info("move {} ({}): {}{}{}", machine_record->id, machine_record->what,
                       toString(machine_record->state), machine_record->message.empty() ? "" : ": ",
                       machine_record->message);
          std::lock_guard lock(mutex_);
          running->active = false;
        },
        asio::detached);
  });
}

AdminReply MoveCoordinator::execute(const MoveCommand& command, const std::string& who) {
  switch (command.kind) {
    case MoveCommandKind::kMove: return startMove(command.request, who);
    case MoveCommandKind::kShow: return show();
    case MoveCommandKind::kCancel: return cancel(command.id);
    case MoveCommandKind::kCleanup: return cleanup(command.id);
  }
  return moveError(1105, "shardproxy admin: unknown move command");
}

std::expected<int64_t, AdminError> MoveCoordinator::start(const routing::MoveRequest& request,
                                                          const std::string& who) {
  auto map = context_.shard_map.load();
  if (!map) return std::unexpected(moveError(routing::move_error::kInvalid, "no shard map in force"));
  if (context_.config().fleet && !context_.fleet_session.load()) {
    // Its cut-over could not fence the fleet, nor publish the map: refused before any copy.
    return std::unexpected(
        moveError(routing::move_error::kFleetUnsynchronised,
                  "shardproxy admin: this proxy has no session with the coordination store (etcd); a move's "
                  "cut-over needs every proxy of the fleet: retry when etcd answers (SHOW FLEET)"));
  }
  auto plan = routing::planMove(*map, request, backendNames());
  if (!plan) return std::unexpected(moveError(plan.error().code, "shardproxy admin: " + plan.error().message));
  std::lock_guard lock(mutex_);
  if (!store_) return std::unexpected(moveError(routing::move_error::kNoStore, "shardproxy admin: " + store_problem_));
  for (const auto& [id, r] : running_) {
    if (sameTable(r->record, plan->request) && (r->active || !moveFinished(r->record.state)) &&
        beforeSwitch(r->record.state)) {
      return std::unexpected(
          moveError(routing::move_error::kConflict,
                    fmt::format("shardproxy admin: move {} ({}) of the same table is {}; wait for it, or CANCEL "
                                "MOVE {}",
                                id, r->record.what, toString(r->record.state), id)));
    }
  }
  MoveRecord record;
  record.request = plan->request;
  record.what = routing::describeMove(plan->request);
  record.source = plan->source_backend + "." + plan->source_table;
  record.target = plan->target_backend + "." + plan->target_table;
  record.old_version = map->version();
  record.created_by = who;
  if (auto saved = store_->save(record); !saved) {
    return std::unexpected(
        moveError(routing::move_error::kNoStore, "shardproxy admin: cannot record the move: " + saved.error()));
  }
  spdlog::info("move {} started by {}: {} ({} -> {})", record.id, who, record.what, record.source, record.target);
  const int64_t id = record.id;
  launch(std::move(record), std::move(*plan), false);
  return id;
}

AdminReply MoveCoordinator::startMove(const routing::MoveRequest& request, const std::string& who) {
  auto id = start(request, who);
  if (!id) return id.error();
  std::lock_guard lock(mutex_);
  LocalResult result;
  result.columns = {"id", "what", "source", "target", "state"};
  if (auto it = running_.find(*id); it != running_.end()) {
    const MoveRecord& r = it->second->record;
    result.rows.push_back({std::to_string(*id), r.what, r.source, r.target, "copying"});
  }
  return result;
}

std::vector<MoveRecord> MoveCoordinator::running() {
  std::lock_guard lock(mutex_);
  std::vector<MoveRecord> out;
  for (const auto& [id, r] : running_) {
    if (r->active) out.push_back(r->record);
  }
  return out;
}

AdminReply MoveCoordinator::show() {
  std::lock_guard lock(mutex_);
  if (!store_) return moveError(routing::move_error::kNoStore, "shardproxy admin: " + store_problem_);
  auto rows = store_->list();
  if (!rows) return moveError(1105, "shardproxy admin: " + rows.error());
  LocalResult result;
  result.columns = {"id", "what", "source", "target", "state", "rows_copied", "copy_rows_per_s", "rows_applied",
                    "catchup_lag_bytes", "catchup_lag_s", "verify", "write_pause_ms", "cutover_attempts",
                    "map_version", "rows_deleted", "target_cleanup", "message", "created_by", "created_at",
                    "updated_at"};
  for (auto r : *rows) {
    if (auto it = running_.find(r.id); it != running_.end()) r = it->second->record;  // the freshest figures
    double rate = r.copy_seconds > 0 ? static_cast<double>(r.rows_copied) / r.copy_seconds : 0;
    result.rows.push_back({std::to_string(r.id), r.what, r.source, r.target, std::string(toString(r.state)),
                           std::to_string(r.rows_copied), figure(rate, 0), std::to_string(r.rows_applied),
                           std::to_string(r.lag_bytes), figure(r.lag_seconds, 0), r.verify.empty() ? "-" : r.verify,
                           figure(r.pause_ms, 1), std::to_string(r.cutover_attempts),
                           r.new_version ? fmt::format("{} -> {}", r.old_version, r.new_version) : "-",
                           std::to_string(r.rows_deleted), describeTargetCleanup(r, lastCleanupError(r.id)),
                           r.message.empty() ? "-" : r.message, r.created_by,
                           r.created_at, r.updated_at});
  }
  return result;
}

AdminReply MoveCoordinator::cancel(int64_t id) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(id);
  if (it == running_.end() || !it->second->active) {
    if (store_) {
      if (auto found = store_->find(id); found && *found) {
        MoveRecord record = it != running_.end() ? it->second->record : **found;
        if (record.target_cleanup == TargetCleanup::kPending) return abandonTargetCleanup(std::move(record));
        return moveError(routing::move_error::kWrongState,
                         fmt::format("shardproxy admin: move {} is {}: nothing to cancel", id, toString((*found)->state)));
      }
    }
    return moveError(routing::move_error::kUnknownMove, fmt::format("shardproxy admin: no move {} (SHOW MOVES)", id));
  }
  MoveState state = it->second->record.state;
  if (!beforeSwitch(state)) {
    return moveError(routing::move_error::kWrongState,
                     fmt::format("shardproxy admin: move {} already switched the map ({}); to undo it, move the "
                                 "keys back with a new MOVE",
                                 id, toString(state)));
  }
  it->second->machine->cancel();
  return AdminOk{};
}

AdminReply MoveCoordinator::cleanup(int64_t id) {
  std::lock_guard lock(mutex_);
  if (!store_) return moveError(routing::move_error::kNoStore, "shardproxy admin: " + store_problem_);
  auto found = store_->find(id);
  if (!found || !*found) {
    return moveError(routing::move_error::kUnknownMove, fmt::format("shardproxy admin: no move {} (SHOW MOVES)", id));
  }
  MoveRecord record = **found;
  auto it = running_.find(id);
  if (it != running_.end()) {
    if (it->second->active) {
      return moveError(routing::move_error::kWrongState,
                       fmt::format("shardproxy admin: move {} is still {}", id, toString(it->second->record.state)));
    }
    record = it->second->record;
  }
  if (record.target_cleanup == TargetCleanup::kPending) return cleanupTargetNow(record);
  if (record.state != MoveState::kVerified) {
    return moveError(routing::move_error::kWrongState,
                     fmt::format("shardproxy admin: move {} is {}: CLEANUP MOVE deletes the source rows only after a "
                                 "verified switch (state verified)",
                                 id, toString(record.state)));
  }
  auto plan = planBefore(record);
  if (!plan) return moveError(1105, "shardproxy admin: move " + std::to_string(id) + ": " + plan.error());
  if (it != running_.end()) context_.write_hold.unwatch(it->second->watch);
  running_.erase(id);
  launch(std::move(record), std::move(*plan), true);
  return AdminOk{};
}

// The move as planned against the map before it (from the map history):
// which rows it moved, from where.
std::expected<routing::MovePlan, std::string> MoveCoordinator::planBefore(const MoveRecord& record) {
  auto history = maps_.history();
  if (!history) return std::unexpected(history.error());
  uint64_t before = record.new_version ? record.new_version - 1 : record.old_version;
  for (const auto& cached : *history) {
    if (cached.version != before) continue;
    auto map = routing::compileShardMap(cached.source_text, backendNames());
    if (!map) break;
    auto plan = routing::planMove(**map, record.request, backendNames());
    if (!plan) return std::unexpected(plan.error().message);
    if (plan->source_backend + "." + plan->source_table != record.source ||
        plan->target_backend + "." + plan->target_table != record.target) {
      break;
    }
    return std::move(*plan);
  }
  return std::unexpected(fmt::format("map version {} (before the move) is not in the map history in the same form",
                                     before));
}

void MoveCoordinator::resume() {
  std::vector<MoveRecord> records;
  {
    std::lock_guard lock(mutex_);
    if (!store_) return;
    auto rows = store_->list();
    if (!rows) {
      spdlog::error("moves not resumed: {}", rows.error());
      return;
    }
    records = std::move(*rows);
  }
  auto map = context_.shard_map.load();
  for (auto& r : records) {
    if (moveFinished(r.state) || r.state == MoveState::kCleanedUp) continue;
    if (r.state == MoveState::kCleaningUp) {
      auto plan = planBefore(r);
      std::lock_guard lock(mutex_);
      if (plan) {
        spdlog::info("move {} ({}): resuming CLEANUP", r.id, r.what);
        r.state = MoveState::kVerified;
        launch(std::move(r), std::move(*plan), true);
      }
      continue;
    }
    std::expected<routing::MovePlan, routing::MoveRefusal> plan =
        map ? routing::planMove(*map, r.request, backendNames())
            : std::expected<routing::MovePlan, routing::MoveRefusal>(std::unexpected(routing::MoveRefusal{}));
    bool same = plan && plan->source_backend + "." + plan->source_table == r.source &&
                plan->target_backend + "." + plan->target_table == r.target;
    if (beforeSwitch(r.state) && same) {
      spdlog::warn("move {} ({}) was {} when the proxy stopped: starting its copy again (routing stayed on the source)",
                   r.id, r.what, toString(r.state));
      std::lock_guard lock(mutex_);
      launch(std::move(r), std::move(*plan), false);
      continue;
    }
    // The map already routes the keys to the target (the switch happened),
    // or no longer matches the move: nothing to run, the operator decides.
    r.message = !plan && plan.error().code == routing::move_error::kAlreadyThere
                    ? "the proxy stopped after the switch, before the verify after it: compare by hand, then move "
                      "back or delete the source rows yourself (CLEANUP needs a verified move)"
                    : "the map in force no longer matches this move; it was stopped (routing follows the map)";
    r.state = r.state == MoveState::kSwitched || (!plan && plan.error().code == routing::move_error::kAlreadyThere)
                  ? MoveState::kVerifyFailed
                  : MoveState::kFailed;
    spdlog::warn("move {} ({}): {}", r.id, r.what, r.message);
    save(r);
  }
}

}  // namespace sp::proxy
