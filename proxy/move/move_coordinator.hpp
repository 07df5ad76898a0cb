// Runs the online moves (docs/admin.md, "Online moves") on a thread of its
// own: the admin commands start, list, cancel and clean up moves here; each
// move is a MoveMachine over the real backends (move_steps.hpp) saved in the
// SQLite file after every step, and the unfinished ones are resumed at
// start-up (a move that had not switched starts its copy again; the map never
// switched without a finished catch-up).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "proxy/core/admin_reply.hpp"
#include "proxy/move/move_command.hpp"
#include "proxy/move/move_machine.hpp"
#include "proxy/move/move_store.hpp"
#include "proxy/move/target_cleanup.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

class ShardMapManager;

class MoveCoordinator {
 public:
  MoveCoordinator(ProxyContext& context, ShardMapManager& maps);
  ~MoveCoordinator();
  MoveCoordinator(const MoveCoordinator&) = delete;
  MoveCoordinator& operator=(const MoveCoordinator&) = delete;

  // Opens the SQLite table, starts the thread, resumes unfinished moves.
  void start();
  void stop();

  // One admin command (thread-safe; answers at once, the move runs on).
  AdminReply execute(const MoveCommand& command, const std::string& who);
  // Starts a move as MOVE ... does (the same checks and steps): its id, or
  // the refusal MOVE would answer. For the hot-key policy (hot_key_mover.hpp).
  std::expected<int64_t, AdminError> start(const routing::MoveRequest& request, const std::string& who);
  // The moves whose coroutine runs now (copies of their records).
  std::vector<MoveRecord> running();
  // The move thread's executor (the hot-key policy checks there).
  asio::any_io_executor executor() { return io_.get_executor(); }

 private:
  struct Running {
    MoveRecord record;
    std::unique_ptr<MoveSteps> steps;
    std::unique_ptr<MoveMachine> machine;
    uint64_t watch = 0;
    bool active = false;  // a coroutine runs it now
  };

  AdminReply startMove(const routing::MoveRequest& request, const std::string& who);
  AdminReply show();
  AdminReply cancel(int64_t id);
  AdminReply cleanup(int64_t id);
  void launch(MoveRecord record, routing::MovePlan plan, bool cleanup_only);
  void resume();
  void save(const MoveRecord& record);
  std::vector<std::string> backendNames() const;
  MoveSettings settings() const;
  std::expected<routing::MovePlan, std::string> planBefore(const MoveRecord& record);

  // The target's copied rows of failed or cancelled moves whose target was
  // down as they stopped (move_coordinator_cleanup.cpp).
  awaitable<void> sweepTargetCleanups();
  std::vector<MoveRecord> pendingTargetCleanups();  // due or not; mutex_ not held
  std::optional<bool> targetUp(const MoveRecord& record) const;
  void startTargetCleanup(MoveRecord record);  // mutex_ held
  awaitable<void> clearTargetOf(MoveRecord record);
  // CLEANUP MOVE / CANCEL MOVE of a move with a pending target cleanup (mutex_ held).
  AdminReply cleanupTargetNow(const MoveRecord& record);
  AdminReply abandonTargetCleanup(MoveRecord record);
  std::string lastCleanupError(int64_t id) const {  // mutex_ held
    auto it = cleanup_errors_.find(id);
    return it == cleanup_errors_.end() ? std::string() : it->second;
  }

  ProxyContext& context_;
  ShardMapManager& maps_;
  std::mutex mutex_;  // store_, running_
  std::unique_ptr<MoveStore> store_;
  std::string store_problem_;
  std::map<int64_t, std::shared_ptr<Running>> running_;
  std::set<int64_t> clearing_;                     // target cleanups in progress
  std::map<int64_t, std::string> cleanup_errors_;  // the last failed try, for SHOW MOVES
  TargetCleanupSchedule cleanup_schedule_{std::chrono::seconds(1), std::chrono::seconds(8)};  // move thread only
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace sp::proxy
