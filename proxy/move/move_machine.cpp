#include "proxy/move/move_machine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/move/target_cleanup.hpp"

namespace sp::proxy {

namespace {
using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

std::string describeVerify(const VerifyOutcome& v) {
  if (v.equal) return fmt::format("ok: {} chunks, {} rows", v.chunks, v.rows);
  return fmt::format("differ: {} of {} chunks ({} rows){}{}", v.differing_chunks, v.chunks, v.rows,
                     v.detail.empty() ? "" : ": ", v.detail);
}

void MoveMachine::enter(MoveState state) {
  r_.state = state;
  save_(r_);
  spdlog::debug("move {}: {}", r_.id, toString(state));
}

void MoveMachine::noteCatchup() {
  auto figures = steps_.catchup();
  r_.applied_position = figures.applied_position;
  r_.rows_applied = figures.rows_applied;
  r_.lag_seconds = figures.lag_seconds;
  r_.lag_bytes = figures.lag_bytes;
}

awaitable<void> MoveMachine::stopBeforeSwitch(MoveState state) {
  steps_.stopCatchup();
  steps_.abandonFleetFence();
  hold_.release(watch_);
  // The target's copied rows are not the truth of anything: delete them;
  // when the target is down, the coordinator retries once it is back.
  if (auto cleared = co_await steps_.clearTarget(); !cleared) noteTargetNotCleared(r_, cleared.error());
  hold_.unwatch(watch_);
  enter(state);
}

awaitable<void> MoveMachine::run() {
  r_.message.clear();
  bool copied = co_await copyAndCatchUp();
  if (!copied) co_return;
  bool verified = co_await verify();
  if (!verified) co_return;
  bool switched = co_await cutOver();
  if (!switched) co_return;
  co_await verifyAfter();
}

awaitable<bool> MoveMachine::catchUpRound() {
  auto end = co_await steps_.sourceEnd();
  if (!end) {
    r_.message = "catch-up: " + end.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  noteCatchup();  // the lag to this end, before applying it
  bool close = steps_.catchup().lag_known && r_.lag_bytes < settings_.cutover_lag_bytes;
  const auto started = Clock::now();
  const uint64_t rows_before = r_.rows_applied;
  if (auto applied = co_await steps_.catchUpTo(*end); !applied) {
    r_.message = "catch-up: " + applied.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  spdlog::debug("move {}: catch-up round: {} bytes of binlog, {} rows applied in {:.1f} ms", r_.id, r_.lag_bytes,
                steps_.catchup().rows_applied - rows_before, millisSince(started));
  co_return close;
}

awaitable<bool> MoveMachine::copyAndCatchUp() {
  enter(MoveState::kCopying);
  r_.rows_copied = 0;
  r_.copy_seconds = 0;
  if (auto prepared = co_await steps_.prepareTarget(); !prepared) {
    r_.message = "preparing the target: " + prepared.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  const std::function<void(uint64_t, double)> progress = [this](uint64_t rows, double seconds) {
    r_.rows_copied = rows;
    r_.copy_seconds = seconds;
    save_(r_);
  };
  auto position = co_await steps_.copy(progress, cancel_);
  if (cancelled()) {
    r_.message = "cancelled during the copy";
    co_await stopBeforeSwitch(MoveState::kCancelled);
    co_return false;
  }
  if (!position) {
    r_.message = "copy: " + position.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  r_.snapshot_position = *position;
  enter(MoveState::kCatchingUp);
  if (auto started = co_await steps_.startCatchup(*position); !started) {
    r_.message = "catch-up: " + started.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  for (uint32_t round = 0; round < settings_.catchup_rounds; ++round) {
    if (cancelled()) {
      r_.message = "cancelled during the catch-up";
    co_await stopBeforeSwitch(MoveState::kCancelled);
      co_return false;
    }
    auto close = co_await catchUpRound();
    if (r_.state == MoveState::kFailed) co_return false;
    save_(r_);
    if (close) break;
  }
  co_return true;
}

awaitable<bool> MoveMachine::verify() {
  enter(MoveState::kVerifying);
  auto outcome = co_await steps_.verifyBeforeSwitch();
  noteCatchup();
  if (cancelled()) {
    r_.message = "cancelled during the verify";
    co_await stopBeforeSwitch(MoveState::kCancelled);
    co_return false;
  }
  if (!outcome) {
    r_.message = "verify: " + outcome.error();
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  r_.verify = describeVerify(*outcome);
  if (!outcome->equal) {
    r_.message = "the target differs from the source before the switch; not switched";
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  save_(r_);
  co_return true;
}

// In-flight writes to the keys and transactions older than the move end
// within the drain timeout (checked every millisecond).
awaitable<bool> MoveMachine::drained() {
  auto started = steps_.now();
  for (;;) {
    if (hold_.drained(watch_)) co_return true;
    if (steps_.now() - started >= settings_.drain_timeout) co_return false;
    co_await steps_.sleep(std::chrono::milliseconds(1));
  }
}

// After a cut-over attempt that did not hold (r_.message says why): true
// to try again after the retry pause, false when the move failed.
awaitable<bool> MoveMachine::retryCutOver(uint32_t attempt) {
  save_(r_);
  if (attempt >= settings_.cutover_attempts) {
    r_.message += "; gave up after " + std::to_string(attempt) + " attempts (routing stays on the source)";
    co_await stopBeforeSwitch(MoveState::kFailed);
    co_return false;
  }
  co_await steps_.sleep(settings_.retry_pause);
  co_return true;
}

awaitable<bool> MoveMachine::cutOver() {
  enter(MoveState::kCuttingOver);
  for (uint32_t attempt = 1;; ++attempt) {
    r_.cutover_attempts = attempt;
    if (cancelled()) {
      r_.message = "cancelled before the switch";
    co_await stopBeforeSwitch(MoveState::kCancelled);
      co_return false;
    }
    // Catch up close to the end first: what is left is applied under the
    // hold. Never hold with more left (the pause would grow with it).
    bool close = false;
    for (uint32_t round = 0; round < settings_.catchup_rounds && !close; ++round) {
      close = co_await catchUpRound();
      if (r_.state == MoveState::kFailed) co_return false;
    }
    if (!close) {
      r_.message = fmt::format("cut-over attempt {}: the catch-up was still {} bytes behind after {} rounds "
                               "(moves.cutover_lag_bytes {}); writes were not held",
                               attempt, r_.lag_bytes, settings_.catchup_rounds, settings_.cutover_lag_bytes);
      if (co_await retryCutOver(attempt)) continue;
      co_return false;
    }
    auto held_at = Clock::now();
    hold_.hold(watch_);
    bool drained_in_time = co_await drained();
    if (!drained_in_time) {
      hold_.release(watch_);
      r_.message = fmt::format("cut-over attempt {}: {} writes in flight, {} older writes and {} transactions "
                               "older than the move did not end within {} ms",
                               attempt, hold_.inFlight(watch_), hold_.olderWrites(watch_),
                               hold_.olderTransactions(watch_), settings_.drain_timeout.count());
      if (co_await retryCutOver(attempt)) continue;
      co_return false;
    }
    // Every other proxy of a fleet holds the keys too before anything switches.
    auto fenced = co_await steps_.fenceFleet();
    if (!fenced) {
      hold_.release(watch_);
      r_.message = fmt::format("cut-over attempt {}: {}", attempt, fenced.error());
      if (co_await retryCutOver(attempt)) continue;
      co_return false;
    }
    // Nothing more can reach the source's moving rows: its end is final for them.
    const double drain_ms = millisSince(held_at);
    auto end = co_await steps_.sourceEnd();
    const uint64_t tail_bytes = steps_.catchup().lag_bytes;  // left to apply under the hold
    std::expected<void, std::string> step;
    if (!end) step = std::unexpected(end.error());
    else step = co_await steps_.catchUpTo(*end);
    const double caught_up_ms = millisSince(held_at);
    if (step) step = co_await steps_.freezeTarget();
    std::expected<uint64_t, std::string> version = std::unexpected(std::string());
    if (step) version = co_await steps_.publish();
    if (!step || !version) {
      r_.message = "cut-over: " + (step ? version.error() : step.error()) + " (not switched)";
    co_await stopBeforeSwitch(MoveState::kFailed);
      co_return false;
    }
    hold_.switched(watch_, *version);
    r_.pause_ms = millisSince(held_at);
    spdlog::info("move {}: writes held {:.1f} ms (in flight drained, and in a fleet fenced, {:.1f} ms, last {} bytes of binlog applied by "
                 "{:.1f} ms, switched to map version {})",
                 r_.id, r_.pause_ms, drain_ms, tail_bytes, caught_up_ms, *version);
    r_.new_version = *version;
    r_.old_version = *version - 1;  // published as the running version + 1
    noteCatchup();
    steps_.stopCatchup();
    r_.message.clear();
    enter(MoveState::kSwitched);
    std::string fleet = co_await steps_.finishFleetFence();
    if (!fleet.empty()) {
      r_.message = fleet;
      r_.pause_ms = millisSince(held_at);  // until the last proxy serves the new map and the fence is lifted
      save_(r_);
    }
    co_return true;
  }
}

awaitable<void> MoveMachine::verifyAfter() {
  auto outcome = co_await steps_.verifyAfterSwitch();
  if (!outcome) {
    r_.verify = "not verified after the switch: " + outcome.error();
    r_.message = "run MOVE back, or check by hand before CLEANUP (CLEANUP needs a verified move)";
    enter(MoveState::kVerifyFailed);
    co_return;
  }
  r_.verify = describeVerify(*outcome);
  enter(outcome->equal ? MoveState::kVerified : MoveState::kVerifyFailed);
}

awaitable<void> MoveMachine::cleanup() {
  enter(MoveState::kCleaningUp);
  for (;;) {
    auto deleted = co_await steps_.deleteSourceBatch();
    if (!deleted) {
      r_.message = "cleanup: " + deleted.error() + " (run CLEANUP MOVE again)";
      enter(MoveState::kVerified);
      co_return;
    }
    r_.rows_deleted += *deleted;
    save_(r_);
    if (*deleted == 0) break;
  }
  hold_.unwatch(watch_);
  r_.message.clear();
  enter(MoveState::kCleanedUp);
}

}  // namespace sp::proxy
