// The move state machine with fake steps: the order of the steps, the map
// published only after the catch-up applied the end read under the hold,
// drain failures and retries, cancel and failures before the switch (the
// target cleared, nothing published), the verify after the switch, cleanup,
// and the record saved at every state.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/move/move_machine.hpp"

namespace sp::proxy {
namespace {

using namespace std::chrono_literals;
using Unit = std::expected<void, std::string>;

routing::MovingKeys keyFortyTwo() {
  routing::MovingKeys k;
  k.table = "t";
  k.kind = routing::MoveKind::kKey;
  k.key = 42;
  return k;
}

class FakeSteps final : public MoveSteps {
 public:
  explicit FakeSteps(WriteHold& hold, uint64_t watch) : hold_(hold), watch_(watch) {}

  std::vector<std::string> calls;
  uint64_t end = 100;            // grows by 10 at every sourceEnd()
  std::string applied;
  bool fail_publish = false;
  bool differ_before = false;
  bool differ_after = false;
  bool cancel_in_copy = false;
  MoveMachine* machine = nullptr;
  uint64_t rows_left = 2500;     // for deleteSourceBatch
  std::function<void()> on_sleep;
  bool published_under_hold_at_end = false;
  uint32_t unknown_ends = 0;     // the first this many ends are in a newer binlog file
  uint32_t ends = 0;             // sourceEnd() calls

  awaitable<Unit> prepareTarget() override { calls.push_back("prepare"); co_return Unit{}; }
  awaitable<std::expected<std::string, std::string>> copy(const std::function<void(uint64_t, double)>& progress,
                                                          const std::atomic<bool>& cancel) override {
    calls.push_back("copy");
    progress(500, 0.1);
    if (cancel_in_copy) machine->cancel();
    progress(1000, 0.2);
    if (cancel.load()) co_return std::unexpected(std::string("cancelled"));
    co_return std::string("bin.1:50");
  }
  awaitable<Unit> startCatchup(const std::string& position) override {
    calls.push_back("catchup from " + position);
    applied = position;
    co_return Unit{};
  }
  awaitable<std::expected<std::string, std::string>> sourceEnd() override {
    end += 10;
    ++ends;
    co_return "bin.1:" + std::to_string(end);
  }
  awaitable<Unit> catchUpTo(const std::string& position) override {
    applied = position;
    co_return Unit{};
  }
  CatchupFigures catchup() const override { return {applied, 7, 0.5, 10, ends > unknown_ends}; }
  awaitable<std::expected<VerifyOutcome, std::string>> verifyBeforeSwitch() override {
    calls.push_back("verify before");
    co_return VerifyOutcome{!differ_before, 3, 1000, differ_before ? 1u : 0u, differ_before ? "row (5,1)" : ""};
  }
  awaitable<Unit> freezeTarget() override { calls.push_back("freeze"); co_return Unit{}; }
  awaitable<std::expected<uint64_t, std::string>> publish() override {
    calls.push_back("publish");
    published_under_hold_at_end = applied == "bin.1:" + std::to_string(end) && hold_.inFlight(watch_) == 0;
    if (fail_publish) co_return std::unexpected(std::string("refused: version"));
    co_return uint64_t{9};
  }
  awaitable<std::expected<VerifyOutcome, std::string>> verifyAfterSwitch() override {
    calls.push_back("verify after");
    co_return VerifyOutcome{!differ_after, 3, 1000, differ_after ? 2u : 0u, ""};
  }
  void stopCatchup() override { calls.push_back("stop catchup"); }
  awaitable<std::expected<uint64_t, std::string>> deleteSourceBatch() override {
    uint64_t n = std::min<uint64_t>(rows_left, 1000);
    rows_left -= n;
    co_return n;
  }
  awaitable<Unit> clearTarget() override { calls.push_back("clear target"); co_return Unit{}; }
  // The fleet's fence: fails `fence_failures` times, then holds.
  int fence_failures = 0;
  awaitable<Unit> fenceFleet() override {
    calls.push_back("fence");
    if (fence_failures > 0) {
      --fence_failures;
      co_return std::unexpected(std::string("no acknowledgement from p2"));
    }
    co_return Unit{};
  }
  awaitable<std::string> finishFleetFence() override {
    calls.push_back("lift after switch");
    co_return std::string("fleet: figures");
  }
  void abandonFleetFence() override { calls.push_back("abandon fence"); }
  awaitable<void> sleep(std::chrono::milliseconds d) override {
    if (on_sleep) on_sleep();
    slept += d;
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(kNoThrow);
  }
  // Time as the machine's sleeps add it up: the drain timeout (20 ms here)
  // never depends on how late a loaded machine runs the timers.
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::time_point{} + slept; }
  std::chrono::milliseconds slept{0};

 private:
  WriteHold& hold_;
  uint64_t watch_;
};

struct MoveMachineTest : ::testing::Test {
  asio::io_context io;
  WriteHold hold;
  uint64_t watch = hold.watch(keyFortyTwo(), "t_s01");
  FakeSteps steps{hold, watch};
  MoveRecord record;
  std::vector<MoveState> saved;
  MoveSettings settings{20ms, 3, 5ms, 1 << 20, 5};
  MoveMachine machine{record, steps, hold, watch, settings, [this](const MoveRecord& r) {
                        if (saved.empty() || saved.back() != r.state) saved.push_back(r.state);
                      }};

  MoveMachineTest() { steps.machine = &machine; }
  void run(bool cleanup = false) {
    asio::co_spawn(io, cleanup ? machine.cleanup() : machine.run(), asio::detached);
    io.restart();
    io.run();
  }
  bool has(const std::string& call) const {
    return std::find(steps.calls.begin(), steps.calls.end(), call) != steps.calls.end();
  }
  // A write planned with map `version` right now.
  Admission admitNow(uint64_t version) {
    routing::TableRule rule;
    rule.name = "t";
    std::vector<uint64_t> keys = {42};
    routing::Plan plan;
    plan.table = &rule;
    plan.key_values = keys;
    SessionWriteGate gate(hold);
    std::optional<Admission> out;
    asio::co_spawn(io, [&]() -> awaitable<void> { out = co_await gate.admit(plan, version); }, asio::detached);
    io.restart();
    io.run_for(50ms);
    gate.settle(false);
    return out.value_or(Admission::kTimeout);
  }
};

TEST_F(MoveMachineTest, AnUnknownLagAcrossABinlogRotationIsNeverClose) {
  // 10 bytes of lag look close; across a rotation they are only the new
  // file's part: the catch-up runs every round (5) before the verify, and
  // before the hold until the lag is known again.
  steps.unknown_ends = 7;
  run();
  EXPECT_EQ(record.state, MoveState::kVerified);
  EXPECT_EQ(steps.ends, 5u + 3u + 1u);  // catching up, before the hold, under it
  EXPECT_EQ(record.cutover_attempts, 1u);
}

TEST_F(MoveMachineTest, NeverHoldsWritesWhileTheCatchUpIsFarBehind) {
  steps.unknown_ends = 1000;
  run();
  EXPECT_EQ(record.state, MoveState::kFailed);
  EXPECT_EQ(record.cutover_attempts, 3u);
  EXPECT_FALSE(has("freeze"));
  EXPECT_FALSE(has("publish"));
  EXPECT_NE(record.message.find("still 10 bytes behind after 5 rounds"), std::string::npos) << record.message;
  EXPECT_NE(record.message.find("gave up after 3 attempts"), std::string::npos) << record.message;
  EXPECT_EQ(steps.ends, 5u + 3u * 5u);
}

TEST_F(MoveMachineTest, RunsEveryStepInOrderAndSwitchesUnderTheHold) {
  run();
  EXPECT_EQ(saved, (std::vector<MoveState>{MoveState::kCopying, MoveState::kCatchingUp, MoveState::kVerifying,
                                           MoveState::kCuttingOver, MoveState::kSwitched, MoveState::kVerified}));
  EXPECT_EQ(steps.calls, (std::vector<std::string>{"prepare", "copy", "catchup from bin.1:50", "verify before",
                                                   "fence", "freeze", "publish", "stop catchup", "lift after switch",
                                                   "verify after"}));
  EXPECT_EQ(record.message, "fleet: figures");
  EXPECT_TRUE(steps.published_under_hold_at_end);
  EXPECT_EQ(record.rows_copied, 1000u);
  EXPECT_EQ(record.snapshot_position, "bin.1:50");
  EXPECT_EQ(record.new_version, 9u);
  EXPECT_EQ(record.cutover_attempts, 1u);
  EXPECT_GE(record.pause_ms, 0.0);
  EXPECT_EQ(record.verify, "ok: 3 chunks, 1000 rows");
  EXPECT_EQ(admitNow(8), Admission::kReplan);  // planned before the switch
  EXPECT_EQ(admitNow(9), Admission::kPass);
}

TEST_F(MoveMachineTest, InFlightWriteBlocksTheSwitchUntilItEnds) {
  hold.transactionOpened(0);  // a transaction from before the move: counted as older
  int sleeps = 0;
  steps.on_sleep = [&] {
    if (++sleeps == 5) hold.transactionClosed(0);
  };
  run();
  EXPECT_EQ(record.state, MoveState::kVerified);
  EXPECT_EQ(record.cutover_attempts, 1u);
  EXPECT_TRUE(steps.published_under_hold_at_end);
}

TEST_F(MoveMachineTest, GivesUpWhenWritesNeverDrain) {
  hold.transactionOpened(0);
  run();
  EXPECT_EQ(record.state, MoveState::kFailed);
  EXPECT_EQ(record.cutover_attempts, 3u);
  EXPECT_FALSE(has("publish"));
  EXPECT_TRUE(has("clear target"));
  EXPECT_NE(record.message.find("gave up after 3 attempts"), std::string::npos) << record.message;
  EXPECT_EQ(admitNow(8), Admission::kPass);  // watch gone: writes go on as planned (source)
  hold.transactionClosed(0);
}

TEST_F(MoveMachineTest, UnacknowledgedFleetFenceRetriesThenSwitches) {
  steps.fence_failures = 2;
  run();
  EXPECT_EQ(record.state, MoveState::kVerified);
  EXPECT_EQ(record.cutover_attempts, 3u);
  EXPECT_EQ(std::count(steps.calls.begin(), steps.calls.end(), "fence"), 3);
  EXPECT_EQ(std::count(steps.calls.begin(), steps.calls.end(), "publish"), 1);
}

TEST_F(MoveMachineTest, FleetFenceNeverAcknowledgedFailsWithRoutingOnTheSource) {
  steps.fence_failures = 10;
  run();
  EXPECT_EQ(record.state, MoveState::kFailed);
  EXPECT_FALSE(has("publish"));
  EXPECT_TRUE(has("abandon fence"));
  EXPECT_NE(record.message.find("no acknowledgement from p2"), std::string::npos) << record.message;
  EXPECT_NE(record.message.find("gave up after 3 attempts"), std::string::npos) << record.message;
  EXPECT_EQ(admitNow(8), Admission::kPass);  // released: the source, as before
}

TEST_F(MoveMachineTest, CancelDuringCopyLeavesRoutingOnTheSource) {
  steps.cancel_in_copy = true;
  run();
  EXPECT_EQ(record.state, MoveState::kCancelled);
  EXPECT_FALSE(has("publish"));
  EXPECT_FALSE(has("catchup from bin.1:50"));
  EXPECT_TRUE(has("clear target"));
}

TEST_F(MoveMachineTest, DifferenceBeforeTheSwitchFailsTheMove) {
  steps.differ_before = true;
  run();
  EXPECT_EQ(record.state, MoveState::kFailed);
  EXPECT_FALSE(has("publish"));
  EXPECT_EQ(record.verify, "differ: 1 of 3 chunks (1000 rows): row (5,1)");
}

TEST_F(MoveMachineTest, RefusedPublishReleasesTheHeldWrites) {
  steps.fail_publish = true;
  run();
  EXPECT_EQ(record.state, MoveState::kFailed);
  EXPECT_NE(record.message.find("refused: version"), std::string::npos);
  EXPECT_EQ(admitNow(8), Admission::kPass);
}

TEST_F(MoveMachineTest, DifferenceAfterTheSwitchIsReported) {
  steps.differ_after = true;
  run();
  EXPECT_EQ(record.state, MoveState::kVerifyFailed);
  EXPECT_EQ(record.new_version, 9u);
}

TEST_F(MoveMachineTest, CleanupDeletesInBatches) {
  run();
  saved.clear();
  run(true);
  EXPECT_EQ(record.state, MoveState::kCleanedUp);
  EXPECT_EQ(record.rows_deleted, 2500u);
  EXPECT_EQ(saved, (std::vector<MoveState>{MoveState::kCleaningUp, MoveState::kCleanedUp}));
}

}  // namespace
}  // namespace sp::proxy
