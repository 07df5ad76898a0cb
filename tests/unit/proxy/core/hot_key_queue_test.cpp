// The per-key write serialiser as a state machine (hot_key_queue.hpp):
// the limit per key, FIFO grants, withdrawals, the per-key queue bound, the
// bypass of a session holding locks, new limits, and idle keys forgotten.
#include <gtest/gtest.h>

#include "proxy/core/hot_key_queue.hpp"

namespace sp::proxy {
namespace {

using Verdict = HotKeyQueue::Verdict;

TEST(HotKeyQueueTest, AdmitsUpToTheLimitPerKeyThenQueues) {
  HotKeyQueue q({2, 10});
  EXPECT_EQ(q.admit("msg:7").verdict, Verdict::kAdmitted);
  EXPECT_EQ(q.admit("msg:7").verdict, Verdict::kAdmitted);
  EXPECT_EQ(q.admit("msg:7").verdict, Verdict::kQueued);
  // Another key has slots of its own.
  EXPECT_EQ(q.admit("msg:8").verdict, Verdict::kAdmitted);
  EXPECT_EQ(q.load("msg:7").active, 2u);
  EXPECT_EQ(q.load("msg:7").waiting, 1u);
  EXPECT_EQ(q.load("msg:8").active, 1u);
}

TEST(HotKeyQueueTest, GrantsInArrivalOrder) {
  HotKeyQueue q({1, 10});
  auto first = q.admit("k");
  auto a = q.admit("k");
  auto b = q.admit("k");
  auto c = q.admit("k");
  ASSERT_EQ(a.verdict, Verdict::kQueued);
  EXPECT_EQ(q.release(first.ticket), std::vector<HotKeyQueue::Ticket>{a.ticket});
  EXPECT_TRUE(q.granted(a.ticket));
  EXPECT_FALSE(q.granted(b.ticket));
  EXPECT_EQ(q.release(a.ticket), std::vector<HotKeyQueue::Ticket>{b.ticket});
  EXPECT_EQ(q.release(b.ticket), std::vector<HotKeyQueue::Ticket>{c.ticket});
  EXPECT_TRUE(q.release(c.ticket).empty());
  EXPECT_EQ(q.keys(), 0u);
}

TEST(HotKeyQueueTest, ANewcomerDoesNotOvertakeAGrantBeingWoken) {
  HotKeyQueue q({1, 10});
  auto first = q.admit("k");
  auto waiting = q.admit("k");
  ASSERT_EQ(q.release(first.ticket).size(), 1u);
  // The slot is the waiter's now; a newcomer queues behind.
  EXPECT_EQ(q.admit("k").verdict, Verdict::kQueued);
  EXPECT_TRUE(q.granted(waiting.ticket));
}

TEST(HotKeyQueueTest, RefusesBeyondTheQueueBoundOfTheKey) {
  HotKeyQueue q({1, 2});
  q.admit("k");
  EXPECT_EQ(q.admit("k").verdict, Verdict::kQueued);
  EXPECT_EQ(q.admit("k").verdict, Verdict::kQueued);
  auto refused = q.admit("k");
  EXPECT_EQ(refused.verdict, Verdict::kFull);
  EXPECT_EQ(refused.ticket, 0u);
  // The bound is per key: another key still queues.
  q.admit("other");
  EXPECT_EQ(q.admit("other").verdict, Verdict::kQueued);
}

TEST(HotKeyQueueTest, AWithdrawnWaiterIsSkippedAndAGrantedOneMustRelease) {
  HotKeyQueue q({1, 10});
  auto first = q.admit("k");
  auto gone = q.admit("k");  // times out, or its client is killed
  auto next = q.admit("k");
  EXPECT_TRUE(q.withdraw(gone.ticket));
  EXPECT_EQ(q.load("k").waiting, 1u);
  EXPECT_EQ(q.release(first.ticket), std::vector<HotKeyQueue::Ticket>{next.ticket});
  // Granted meanwhile: withdraw says so, and the slot is still held.
  EXPECT_FALSE(q.withdraw(next.ticket));
  EXPECT_EQ(q.load("k").active, 1u);
  q.release(next.ticket);
  EXPECT_EQ(q.keys(), 0u);
}

TEST(HotKeyQueueTest, ATransactionHoldingLocksBypassesTheQueueButCounts) {
  HotKeyQueue q({1, 10});
  auto holder = q.admit("k");
  auto waiter = q.admit("k");
  // A session whose transaction holds row locks never waits behind writers
  // that may be waiting for them.
  auto bypass = q.admit("k", true);
  EXPECT_EQ(bypass.verdict, Verdict::kAdmitted);
  EXPECT_EQ(q.load("k").active, 2u);
  // Its slot, like the holder's, must go back before the waiter gets one.
  EXPECT_TRUE(q.release(holder.ticket).empty());
  EXPECT_EQ(q.release(bypass.ticket), std::vector<HotKeyQueue::Ticket>{waiter.ticket});
}

TEST(HotKeyQueueTest, AHigherLimitOrOffGrantsTheWaiters) {
  HotKeyQueue q({1, 10});
  q.admit("k");
  auto a = q.admit("k");
  auto b = q.admit("k");
  EXPECT_EQ(q.setLimits({2, 10}), std::vector<HotKeyQueue::Ticket>{a.ticket});
  EXPECT_EQ(q.setLimits({0, 10}), std::vector<HotKeyQueue::Ticket>{b.ticket});
  EXPECT_EQ(q.admit("k").verdict, Verdict::kAdmitted);  // off: no limit
}

TEST(HotKeyQueueTest, IdleKeysAreForgotten) {
  HotKeyQueue q({1, 10});
  std::vector<HotKeyQueue::Ticket> tickets;
  for (int i = 0; i < 1000; ++i) tickets.push_back(q.admit("msg:" + std::to_string(i)).ticket);
  EXPECT_EQ(q.keys(), 1000u);
  for (auto t : tickets) q.release(t);
  EXPECT_EQ(q.keys(), 0u);
  EXPECT_EQ(q.active(), 0u);
  // A refused admission leaves nothing behind either.
  HotKeyQueue none({1, 0});
  auto t = none.admit("k");
  EXPECT_EQ(none.admit("k").verdict, Verdict::kFull);
  none.release(t.ticket);
  EXPECT_EQ(none.keys(), 0u);
}

}  // namespace
}  // namespace sp::proxy
