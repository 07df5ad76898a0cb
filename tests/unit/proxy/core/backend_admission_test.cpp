// Every server's budget across threads (backend_admission.hpp), driven on
// real io_contexts: a waiting statement is woken by a release on another
// thread, times out with its wait measured, is refused when the queue is
// full, stops at interrupt() (KILL) and leaves the queue when its session
// ends; a server without a budget only counts.
#include <gtest/gtest.h>

#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "proxy/core/backend_admission.hpp"

namespace sp::proxy {
namespace {

using namespace std::chrono_literals;
using State = AdmissionSlot::State;

struct BackendAdmissionTest : ::testing::Test {
  asio::io_context io;
  BackendAdmissions admissions;

  void budget(uint32_t n, std::chrono::milliseconds timeout = 1000ms, uint32_t max_queued = 100) {
    admissions.configure({{"db0", n}}, OverloadSettings{timeout, max_queued});
  }
  const AdmissionStats statsOf(std::string_view server) {
    for (auto& s : admissions.stats()) {
      if (s.server == server) return s;
    }
    return {};
  }
  // Waits for `slot` in a coroutine; `done` set when the wait ended.
  void spawnWait(AdmissionSlot& slot, bool& done, AdmissionWait* handle = nullptr) {
    asio::co_spawn(io, [&, handle]() -> awaitable<void> {
      co_await admissions.wait(slot, handle);
      done = true;
    }, asio::detached);
  }
};

TEST_F(BackendAdmissionTest, WithoutAnyBudgetEverythingPassesUncounted) {
  // The default: no shared counter is touched per statement.
  budget(0);
  EXPECT_FALSE(admissions.anyBudget());
  std::vector<AdmissionSlot> slots;
  for (int i = 0; i < 5; ++i) slots.push_back(admissions.enter("db0", "u", "", false));
  for (auto& s : slots) EXPECT_TRUE(s.admitted());
  EXPECT_EQ(statsOf("db0").active, 0u);
  slots.clear();
  EXPECT_EQ(statsOf("db0").admitted, 0u);
}

TEST_F(BackendAdmissionTest, AServerWithoutABudgetIsCountedWhileAnotherHasOne) {
  admissions.configure({{"db0", 0}, {"db1", 3}}, OverloadSettings{std::chrono::milliseconds(1000), 100});
  EXPECT_TRUE(admissions.anyBudget());
  std::vector<AdmissionSlot> slots;
  for (int i = 0; i < 5; ++i) slots.push_back(admissions.enter("db0", "u", "", false));
  for (auto& s : slots) EXPECT_TRUE(s.admitted());
  EXPECT_EQ(statsOf("db0").active, 5u);
  slots.clear();
  EXPECT_EQ(statsOf("db0").active, 0u);
  EXPECT_EQ(statsOf("db0").admitted, 5u);
}

TEST_F(BackendAdmissionTest, AReleaseOnAnotherThreadWakesTheWaiter) {
  budget(1);
  auto first = admissions.enter("db0", "u", "", false);
  ASSERT_TRUE(first.admitted());
  auto second = admissions.enter("db0", "u", "", false);
  ASSERT_EQ(second.state(), State::kQueued);
  bool done = false;
  spawnWait(second, done);
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    first.release();
  });
  io.run_for(2s);
  releaser.join();
  EXPECT_TRUE(done);
  EXPECT_TRUE(second.admitted());
  EXPECT_GE(second.waited(), 40ms);
  EXPECT_LT(second.waited(), 1000ms);
  auto s = statsOf("db0");
  EXPECT_EQ(s.waited, 1u);
  EXPECT_EQ(s.active, 1u);
  EXPECT_EQ(s.queued, 0u);
}

TEST_F(BackendAdmissionTest, AWaitTimesOut) {
  budget(1, 60ms);
  auto first = admissions.enter("db0", "u", "", false);
  auto second = admissions.enter("db0", "u", "", false);
  bool done = false;
  spawnWait(second, done);
  io.run_for(2s);
  EXPECT_TRUE(done);
  EXPECT_EQ(second.state(), State::kTimedOut);
  EXPECT_GE(second.waited(), 55ms);
  auto s = statsOf("db0");
  EXPECT_EQ(s.rejected_timeout, 1u);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_EQ(s.active, 1u);
  first.release();
  EXPECT_EQ(statsOf("db0").active, 0u);  // the timed-out one held nothing
}

TEST_F(BackendAdmissionTest, AFullQueueRefusesAtOnce) {
  budget(1, 1000ms, 1);
  auto first = admissions.enter("db0", "u", "", false);
  auto second = admissions.enter("db0", "u", "", false);
  auto third = admissions.enter("db0", "u", "", false);
  EXPECT_EQ(second.state(), State::kQueued);
  EXPECT_EQ(third.state(), State::kFull);
  EXPECT_TRUE(third.refused());
  EXPECT_EQ(statsOf("db0").rejected_full, 1u);
}

TEST_F(BackendAdmissionTest, InterruptEndsTheWaitAndFreesNothing) {
  budget(1);
  auto first = admissions.enter("db0", "u", "", false);
  auto second = admissions.enter("db0", "u", "", false);
  AdmissionWait handle;
  bool done = false;
  spawnWait(second, done, &handle);
  asio::steady_timer kill(io, 30ms);
  kill.async_wait([&](auto) { handle.interrupt(); });
  io.run_for(2s);
  EXPECT_TRUE(done);
  EXPECT_EQ(second.state(), State::kInterrupted);
  EXPECT_EQ(statsOf("db0").interrupted, 1u);
  EXPECT_EQ(statsOf("db0").queued, 0u);
  // interrupt() outside a wait is nothing: the next statement waits as usual.
  handle.interrupt();
  auto third = admissions.enter("db0", "u", "", false);
  first.release();
  EXPECT_TRUE(third.state() == State::kQueued);
}

// The session ended while its statement waited (the slot destroyed in the
// queue): it leaves the queue, and a later release goes to the next one.
TEST_F(BackendAdmissionTest, ASlotDestroyedWhileQueuedLeavesTheQueue) {
  budget(1);
  auto first = admissions.enter("db0", "u", "", false);
  {
    auto gone = admissions.enter("db0", "u", "", false);
    EXPECT_EQ(statsOf("db0").queued, 1u);
  }
  EXPECT_EQ(statsOf("db0").queued, 0u);
  auto next = admissions.enter("db0", "v", "", false);
  first.release();
  bool done = false;
  spawnWait(next, done);
  io.run_for(1s);
  EXPECT_TRUE(next.admitted());
}

TEST_F(BackendAdmissionTest, ARaisedBudgetAdmitsWaiters) {
  budget(1);
  auto first = admissions.enter("db0", "u", "", false);
  auto second = admissions.enter("db0", "u", "", false);
  bool done = false;
  spawnWait(second, done);
  asio::steady_timer reload(io, 30ms);
  reload.async_wait([&](auto) { budget(2); });
  io.run_for(2s);
  EXPECT_TRUE(second.admitted());
  EXPECT_EQ(statsOf("db0").budget, 2u);
}

}  // namespace
}  // namespace sp::proxy
