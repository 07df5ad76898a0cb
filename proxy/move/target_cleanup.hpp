// A move stopped before its switch (failed, cancelled) deletes the rows it
// copied to its target; when the target is down at that moment the rows
// stay. The record then remembers them (MoveRecord::target_cleanup, saved in
// the SQLite file, so a restart keeps it) and the coordinator deletes them
// once the target answers again (move_coordinator_cleanup.cpp). These are
// the record's notes and the retry schedule: pure, unit-tested.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "proxy/move/move_store.hpp"

namespace sp::proxy {

// The delete failed as the move stopped: pending, and the message says so.
void noteTargetNotCleared(MoveRecord& r, const std::string& why);
// A pending delete succeeded at `at` (UTC text): done.
void noteTargetCleared(MoveRecord& r, const std::string& at);
// A pending delete is not retried any more (the map changed, CANCEL MOVE).
void noteTargetCleanupAbandoned(MoveRecord& r, const std::string& why);
// SHOW MOVES' target_cleanup column; `last_error`: the last failed retry.
std::string describeTargetCleanup(const MoveRecord& r, const std::string& last_error);

// When a pending delete is tried: at once the first time, then after a
// pause that doubles from `first` to `longest` per failed try; never while
// the health monitor calls the target down (a try would only fail), and at
// once when the monitor sees it answer again after that.
class TargetCleanupSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  TargetCleanupSchedule(std::chrono::milliseconds first, std::chrono::milliseconds longest)
      : first_(first), longest_(longest) {}
  // `target_up`: the health monitor's view of the target (nullopt: none yet).
  bool due(int64_t id, Clock::time_point now, std::optional<bool> target_up);
  void failed(int64_t id, Clock::time_point now);
  void forget(int64_t id) { entries_.erase(id); }

 private:
  struct Entry {
    Clock::time_point next{};
    std::chrono::milliseconds pause{0};
    std::optional<bool> seen_up;
  };
  std::chrono::milliseconds first_, longest_;
  std::map<int64_t, Entry> entries_;
};

}  // namespace sp::proxy
