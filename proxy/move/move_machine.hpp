// The state machine of one online move (docs/operations.md, "Online moves"):
//
//   copying -> catching_up -> verifying -> cutting_over -> switched -> verified
//                                                                   -> verify_failed
//   any state before the switch -> failed | cancelled (routing stays on the source)
//   verified -> cleaning_up -> cleaned_up   (CLEANUP MOVE, asked for)
//
// It drives MoveSteps (the backends: move_steps.hpp; fakes in unit tests)
// and the write hold, saves the record after every step (the SQLite file in
// production), and never publishes the new map before the catch-up has
// applied the source's binlog end taken while writes to the keys are held
// and no write to them is in flight.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>

#include "proxy/move/move_store.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/write_hold.hpp"

namespace sp::proxy {

struct VerifyOutcome {
  bool equal = false;
  uint64_t chunks = 0;
  uint64_t rows = 0;            // rows compared (source side)
  uint64_t differing_chunks = 0;
  std::string detail;           // the first differing rows, for the operator
};

std::string describeVerify(const VerifyOutcome& v);

struct CatchupFigures {
  std::string applied_position;
  uint64_t rows_applied = 0;
  double lag_seconds = 0;
  uint64_t lag_bytes = 0;       // to the last end position read
  // False when the end is in a newer binlog file than the applied position:
  // lag_bytes is then only the new file's part (a lower bound), never "close".
  bool lag_known = true;
};

// What a move does to the backends and the map. Positions are the source's
// binlog positions as text ("file:pos"), opaque to the machine.
class MoveSteps {
 public:
  virtual ~MoveSteps() = default;
  // The target table exists and holds no row of the moving keys (a partial
  // copy of an earlier attempt is deleted: before the switch the source is
  // the only truth).
  virtual awaitable<std::expected<void, std::string>> prepareTarget() = 0;
  // Copies the moving rows from one consistent snapshot of the source in
  // key-ordered batches; `progress(rows, seconds)` after each batch; returns
  // the snapshot's binlog position. Stops with an error when `cancel` is set.
  virtual awaitable<std::expected<std::string, std::string>> copy(
      const std::function<void(uint64_t, double)>& progress, const std::atomic<bool>& cancel) = 0;
  // The catch-up starts reading the source's binlog at `position`.
  virtual awaitable<std::expected<void, std::string>> startCatchup(const std::string& position) = 0;
  virtual awaitable<std::expected<std::string, std::string>> sourceEnd() = 0;
  // Applies the moving keys' changes through `position` (whole transactions).
  virtual awaitable<std::expected<void, std::string>> catchUpTo(const std::string& position) = 0;
  virtual CatchupFigures catchup() const = 0;
  // Chunked checksums of a source snapshot against the target once the
  // catch-up has applied up to that snapshot; rows compared where chunks differ.
  virtual awaitable<std::expected<VerifyOutcome, std::string>> verifyBeforeSwitch() = 0;
  // While writes are held and the target has applied the source's end: a
  // snapshot of the target for verifyAfterSwitch (the target takes new
  // writes as soon as they are released).
  virtual awaitable<std::expected<void, std::string>> freezeTarget() = 0;
  // Publishes the map after the move (same validation and history as a
  // reload); the new version.
  virtual awaitable<std::expected<uint64_t, std::string>> publish() = 0;
  virtual awaitable<std::expected<VerifyOutcome, std::string>> verifyAfterSwitch() = 0;
  virtual void stopCatchup() = 0;
  // Deletes one batch of the moving rows from the source (CLEANUP); rows deleted.
  virtual awaitable<std::expected<uint64_t, std::string>> deleteSourceBatch() = 0;
  // Deletes the moving keys' rows from the target (CANCEL, a failure before the switch).
  virtual awaitable<std::expected<void, std::string>> clearTarget() = 0;
  virtual awaitable<void> sleep(std::chrono::milliseconds duration) = 0;
  // The clock the drain timeout is measured on (tests count their sleeps
  // instead: a loaded machine must not decide whether writes drained).
  virtual std::chrono::steady_clock::time_point now() const { return std::chrono::steady_clock::now(); }
  // In a fleet (fleet_cutover.hpp), while this proxy holds the keys: fences
  // them on every proxy and waits until each holds them; an error says who
  // did not (the fence is lifted again). Alone: nothing to do.
  virtual awaitable<std::expected<void, std::string>> fenceFleet() { co_return std::expected<void, std::string>{}; }
  // After the switch: waits until every proxy serves the new map, then lifts
  // the fence; a note for the record ("" alone).
  virtual awaitable<std::string> finishFleetFence() { co_return std::string(); }
  // Lifts a fence standing without a switch (routing stays on the source).
  virtual void abandonFleetFence() {}
  // Copy and cleanup batches yield to the foreground (proxy/core/
  // background_gate.hpp): `note(why)` when one starts waiting, `note("")`
  // when it goes on, for the record.
  virtual void setYieldNote(std::function<void(const std::string&)> note) { (void)note; }
};

struct MoveSettings {
  std::chrono::milliseconds drain_timeout{500};   // in-flight writes must end within this at a cut-over
  uint32_t cutover_attempts = 5;                   // then the move fails (routing stays on the source)
  std::chrono::milliseconds retry_pause{1000};     // between cut-over attempts
  uint64_t cutover_lag_bytes = 65536;              // catch up until the binlog left is below this
  uint32_t catchup_rounds = 100;                   // rounds of catching up before the cut-over is tried anyway
};

class MoveMachine {
 public:
  using Saver = std::function<void(const MoveRecord&)>;
  MoveMachine(MoveRecord& record, MoveSteps& steps, WriteHold& hold, uint64_t watch, MoveSettings settings,
              Saver save)
      : r_(record), steps_(steps), hold_(hold), watch_(watch), settings_(settings), save_(std::move(save)) {
    steps_.setYieldNote([this](const std::string& why) {
      if (!why.empty()) r_.message = "paused: " + why;
      else if (r_.message.starts_with("paused: ")) r_.message.clear();
      save_(r_);
    });
  }

  // Runs from copying (a resumed move starts its copy again) through the
  // verify after the switch.
  awaitable<void> run();
  // CLEANUP MOVE: deletes the source's rows of a verified move.
  awaitable<void> cleanup();
  void cancel() { cancel_.store(true); }

 private:
  awaitable<bool> copyAndCatchUp();
  awaitable<bool> verify();
  awaitable<bool> cutOver();
  awaitable<bool> retryCutOver(uint32_t attempt);
  awaitable<bool> drained();
  awaitable<void> verifyAfter();
  awaitable<bool> catchUpRound();
  // With r_.message set to why (a coroutine takes no temporaries: GCC 12
  // destroys them twice).
  awaitable<void> stopBeforeSwitch(MoveState state);
  bool cancelled() const { return cancel_.load(); }
  void enter(MoveState state);
  void noteCatchup();

  MoveRecord& r_;
  MoveSteps& steps_;
  WriteHold& hold_;
  uint64_t watch_;
  MoveSettings settings_;
  Saver save_;
  std::atomic<bool> cancel_{false};
};

}  // namespace sp::proxy
