// Hot-key slots across threads (hot_key_gate.hpp) on real io_contexts:
// waiters of one key are woken in arrival order by releases on another
// thread, a wait times out or stops at KILL, a slot destroyed while queued
// leaves the queue, a transaction's kept slots go back when it ends, and
// the serialiser off costs nothing.
#include <gtest/gtest.h>

#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "proxy/core/hot_key_gate.hpp"

namespace sp::proxy {
namespace {

using namespace std::chrono_literals;
using KeyState = HotKeySlot::State;

struct HotKeyGateTest : ::testing::Test {
  asio::io_context io;
  HotKeyGate gate;

  void limit(uint32_t concurrency, std::chrono::milliseconds timeout = 2000ms, uint32_t max_queued = 100) {
    gate.configure({concurrency, max_queued, timeout});
  }
  // Waits for `slot` in a coroutine; appends `id` to `order` when admitted.
  void spawnWait(HotKeySlot& slot, int id, std::vector<int>& order, AdmissionWait* handle = nullptr) {
    asio::co_spawn(io, [&, id, handle]() -> awaitable<void> {
      co_await gate.wait(slot, handle);
      order.push_back(slot.admitted() ? id : -id);
    }, asio::detached);
  }
};

TEST_F(HotKeyGateTest, WaitersOfOneKeyAreWokenInArrivalOrderFromAnotherThread) {
  limit(1);
  auto holder = gate.enter("msg:1", false);
  ASSERT_TRUE(holder.admitted());
  std::vector<HotKeySlot> waiting;
  for (int i = 0; i < 3; ++i) waiting.push_back(gate.enter("msg:1", false));
  for (auto& w : waiting) ASSERT_EQ(w.state(), KeyState::kQueued);
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) spawnWait(waiting[static_cast<size_t>(i)], i + 1, order);
  // Each admitted writer finishes 20 ms later, on a thread of its own.
  std::thread releaser([&] {
    std::this_thread::sleep_for(30ms);
    holder.release();
  });
  io.run_for(100ms);
  releaser.join();
  // A loaded machine may run the releaser late: what it woke runs now.
  io.restart();
  while (io.poll() > 0) {
  }
  ASSERT_EQ(order, std::vector<int>{1});
  EXPECT_EQ(gate.load("msg:1").active, 1u);
  EXPECT_EQ(gate.load("msg:1").waiting, 2u);
  waiting[0].release();
  io.restart();
  io.run_for(100ms);
  waiting[1].release();
  io.restart();
  io.run_for(100ms);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_GE(waiting[0].waited(), 25ms);
  const auto s = gate.stats();
  EXPECT_EQ(s.serialised, 3u);
  EXPECT_EQ(s.admitted, 4u);
  waiting[2].release();
  EXPECT_EQ(gate.keys(), 0u);  // idle: forgotten
}

TEST_F(HotKeyGateTest, AWaitTimesOutHoldingNothing) {
  limit(1, 50ms);
  auto holder = gate.enter("t:9", false);
  auto late = gate.enter("t:9", false);
  std::vector<int> order;
  spawnWait(late, 1, order);
  io.run_for(1s);
  ASSERT_EQ(order, std::vector<int>{-1});
  EXPECT_EQ(late.state(), KeyState::kTimedOut);
  EXPECT_GE(late.waited(), 45ms);
  EXPECT_EQ(gate.stats().rejected_timeout, 1u);
  EXPECT_EQ(gate.load("t:9").active, 1u);
  EXPECT_EQ(gate.load("t:9").waiting, 0u);
}

TEST_F(HotKeyGateTest, KillEndsTheWaitAndTheQueueBoundRefuses) {
  limit(1, 2000ms, 1);
  auto holder = gate.enter("k:1", false);
  auto queued = gate.enter("k:1", false);
  auto refused = gate.enter("k:1", false);
  EXPECT_EQ(refused.state(), KeyState::kFull);
  EXPECT_EQ(refused.limit(), 1u);
  AdmissionWait handle;
  std::vector<int> order;
  spawnWait(queued, 1, order, &handle);
  asio::steady_timer kill(io, 20ms);
  kill.async_wait([&](auto) { handle.interrupt(); });
  io.run_for(1s);
  EXPECT_EQ(queued.state(), KeyState::kInterrupted);
  const auto s = gate.stats();
  EXPECT_EQ(s.interrupted, 1u);
  EXPECT_EQ(s.rejected_full, 1u);
  EXPECT_EQ(s.queued, 0u);
}

TEST_F(HotKeyGateTest, ASlotDestroyedWhileQueuedLeavesTheQueue) {
  limit(1);
  auto holder = gate.enter("k:2", false);
  { auto gone = gate.enter("k:2", false); }  // its session ended while it waited
  EXPECT_EQ(gate.load("k:2").waiting, 0u);
  auto next = gate.enter("k:2", false);
  holder.release();
  std::vector<int> order;
  spawnWait(next, 7, order);
  io.run_for(200ms);
  EXPECT_EQ(order, std::vector<int>{7});
}

TEST_F(HotKeyGateTest, ATransactionKeepsItsSlotsUntilItEnds) {
  limit(1);
  HotKeyHolds txn;
  auto first = gate.enter("msg:5", false);
  ASSERT_TRUE(txn.keep(first));
  EXPECT_EQ(first.state(), KeyState::kNone);  // moved into the transaction
  EXPECT_TRUE(txn.holds("msg:5"));
  txn.settle(true);  // still in the transaction
  auto other = gate.enter("msg:5", false);
  EXPECT_EQ(other.state(), KeyState::kQueued);
  // Its next key, with locks held already: past any queue.
  auto second = gate.enter("msg:6", true);
  ASSERT_TRUE(txn.keep(second));
  EXPECT_EQ(gate.stats().bypassed, 1u);
  txn.settle(false);  // COMMIT
  EXPECT_TRUE(txn.empty());
  std::vector<int> order;
  spawnWait(other, 1, order);
  io.run_for(200ms);
  EXPECT_EQ(order, std::vector<int>{1});
}

TEST_F(HotKeyGateTest, OffAdmitsEverythingUncountedAndAReloadWakesWaiters) {
  limit(0);
  EXPECT_FALSE(gate.enabled());
  auto free = gate.enter("k:3", false);
  EXPECT_EQ(free.state(), KeyState::kNone);
  EXPECT_FALSE(free.refused());
  EXPECT_EQ(gate.keys(), 0u);
  limit(1);
  auto holder = gate.enter("k:3", false);
  auto waiter = gate.enter("k:3", false);
  std::vector<int> order;
  spawnWait(waiter, 1, order);
  io.run_for(20ms);
  EXPECT_TRUE(order.empty());
  limit(2);  // RELOAD with a higher limit
  io.restart();
  io.run_for(200ms);
  EXPECT_EQ(order, std::vector<int>{1});
}

}  // namespace
}  // namespace sp::proxy
