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
#include <string>
#include <thread>

#include "proxy/core/admin_reply.hpp"
#include "proxy/move/move_command.hpp"
#include "proxy/move/move_machine.hpp"
#include "proxy/move/move_store.hpp"
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

 private:
  struct Running;

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

  ProxyContext& context_;
  ShardMapManager& maps_;
  std::mutex mutex_;  // store_, running_
  std::unique_ptr<MoveStore> store_;
  std::string store_problem_;
  std::map<int64_t, std::shared_ptr<Running>> running_;
  asio::io_context io_{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace sp::proxy
