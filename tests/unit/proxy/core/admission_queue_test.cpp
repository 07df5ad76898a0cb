// The fair queue in front of a server's concurrency budget, as a state
// machine (no clock, no threads): admission under the budget, fairness of
// freed slots between users and between keys, the queue bound, withdrawal
// (a timeout or a KILL) and its race with a grant, bypass for transactions,
// a budget changed by a reload.
#include <gtest/gtest.h>

#include "proxy/core/admission_queue.hpp"

namespace sp::proxy {
namespace {

using V = AdmissionQueue::Verdict;
using Ticket = AdmissionQueue::Ticket;

AdmissionQueue queueOf(uint32_t budget, uint32_t max_queued = 1000) {
  return AdmissionQueue(AdmissionQueue::Limits{budget, max_queued});
}

TEST(AdmissionQueue, AdmitsUpToTheBudgetThenQueues) {
  auto q = queueOf(2);
  EXPECT_EQ(q.admit("a", "").verdict, V::kAdmitted);
  EXPECT_EQ(q.admit("a", "").verdict, V::kAdmitted);
  auto third = q.admit("a", "");
  EXPECT_EQ(third.verdict, V::kQueued);
  EXPECT_EQ(q.active(), 2u);
  EXPECT_EQ(q.queued(), 1u);
  EXPECT_FALSE(q.granted(third.ticket));
}

TEST(AdmissionQueue, NoBudgetAdmitsEverything) {
  auto q = queueOf(0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(q.admit("a", "k").verdict, V::kAdmitted);
  EXPECT_EQ(q.active(), 100u);
}

TEST(AdmissionQueue, ReleaseGrantsTheOldestOfOneUser) {
  auto q = queueOf(1);
  auto first = q.admit("a", "");
  auto w1 = q.admit("a", "");
  auto w2 = q.admit("a", "");
  auto granted = q.release(first.ticket);
  ASSERT_EQ(granted, std::vector<Ticket>{w1.ticket});
  EXPECT_TRUE(q.granted(w1.ticket));
  EXPECT_EQ(q.release(w1.ticket), std::vector<Ticket>{w2.ticket});
  EXPECT_TRUE(q.release(w2.ticket).empty());
  EXPECT_EQ(q.active(), 0u);
  EXPECT_EQ(q.queued(), 0u);
}

// A user floods the queue with 20 statements, then another user sends one:
// the other user's statement gets the very next freed slot.
TEST(AdmissionQueue, AFloodingUserDoesNotStarveAnother) {
  auto q = queueOf(2);
  std::vector<Ticket> running{q.admit("flood", "").ticket, q.admit("flood", "").ticket};
  std::vector<Ticket> flood;
  for (int i = 0; i < 20; ++i) flood.push_back(q.admit("flood", "").ticket);
  auto other = q.admit("other", "");
  ASSERT_EQ(other.verdict, V::kQueued);
  auto granted = q.release(running[0]);
  ASSERT_EQ(granted, std::vector<Ticket>{other.ticket});
  EXPECT_EQ(q.activeOfUser("other"), 1u);
  EXPECT_EQ(q.activeOfUser("flood"), 1u);
}

// Two users both waiting: freed slots alternate, so each gets half while both wait.
TEST(AdmissionQueue, FreedSlotsAreSharedEvenlyBetweenWaitingUsers) {
  auto q = queueOf(4);
  std::vector<Ticket> running;
  for (int i = 0; i < 4; ++i) running.push_back(q.admit("a", "").ticket);  // a holds everything
  for (int i = 0; i < 10; ++i) q.admit("a", "");
  for (int i = 0; i < 10; ++i) q.admit("b", "");
  std::map<std::string, int> grants;
  std::vector<Ticket> holders = running;
  for (int round = 0; round < 12; ++round) {
    Ticket done = holders.front();
    holders.erase(holders.begin());
    for (Ticket t : q.release(done)) holders.push_back(t);
    grants["a"] = static_cast<int>(q.activeOfUser("a"));
    grants["b"] = static_cast<int>(q.activeOfUser("b"));
  }
  // After the first slots freed, b catches up to a's share and they split.
  EXPECT_EQ(grants["a"], 2);
  EXPECT_EQ(grants["b"], 2);
}

// One hot key (a conversation) written by many users cannot take the freed
// slots from a quiet key while the quiet key waits.
TEST(AdmissionQueue, AHotKeyAcrossUsersGetsOnlyItsShare) {
  auto q = queueOf(3);
  std::vector<Ticket> running;
  for (int i = 0; i < 3; ++i) running.push_back(q.admit("u" + std::to_string(i), "msg:7").ticket);
  for (int i = 0; i < 30; ++i) q.admit("u" + std::to_string(i % 10), "msg:7");
  auto quiet = q.admit("u99", "msg:8");
  ASSERT_EQ(quiet.verdict, V::kQueued);
  // u99 holds nothing and neither does its key: first in line, though last to come.
  EXPECT_EQ(q.release(running[0]), std::vector<Ticket>{quiet.ticket});
  EXPECT_EQ(q.activeOfKey("msg:7"), 2u);
  EXPECT_EQ(q.activeOfKey("msg:8"), 1u);
}

// Within one user, a hot key and a quiet key: the quiet key's statement goes
// first (the hot key was served last), then they alternate.
TEST(AdmissionQueue, KeysOfOneUserShareItsSlots) {
  auto q = queueOf(1);
  auto running = q.admit("app", "conv:1");
  for (int i = 0; i < 5; ++i) q.admit("app", "conv:1");
  auto quiet = q.admit("app", "conv:2");
  auto quiet2 = q.admit("app", "conv:2");
  EXPECT_EQ(q.release(running.ticket), std::vector<Ticket>{quiet.ticket});
  auto next = q.release(quiet.ticket);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next.front(), quiet2.ticket);  // conv:1's turn again
}

// Budget 1 and a flood: holding nothing when the slot frees, the flooding
// user was still served last, so the other user goes first.
TEST(AdmissionQueue, RoundRobinWhenNobodyHoldsASlot) {
  auto q = queueOf(1);
  auto running = q.admit("flood", "");
  for (int i = 0; i < 10; ++i) q.admit("flood", "");
  auto other = q.admit("other", "");
  EXPECT_EQ(q.release(running.ticket), std::vector<Ticket>{other.ticket});
}

TEST(AdmissionQueue, QueueFullRefusesWithoutATicket) {
  auto q = queueOf(1, 2);
  q.admit("a", "");
  EXPECT_EQ(q.admit("a", "").verdict, V::kQueued);
  EXPECT_EQ(q.admit("b", "").verdict, V::kQueued);
  auto refused = q.admit("c", "");
  EXPECT_EQ(refused.verdict, V::kFull);
  EXPECT_EQ(refused.ticket, 0u);
  EXPECT_EQ(q.queued(), 2u);
}

TEST(AdmissionQueue, ZeroQueueRefusesEverythingOverTheBudget) {
  auto q = queueOf(1, 0);
  EXPECT_EQ(q.admit("a", "").verdict, V::kAdmitted);
  EXPECT_EQ(q.admit("a", "").verdict, V::kFull);
}

// A statement that gives up (timeout, KILL, disconnect) leaves the queue
// and is never granted; the next one is.
TEST(AdmissionQueue, WithdrawnTicketIsNeverGranted) {
  auto q = queueOf(1);
  auto running = q.admit("a", "");
  auto gone = q.admit("a", "");
  auto next = q.admit("b", "");
  EXPECT_TRUE(q.withdraw(gone.ticket));
  EXPECT_EQ(q.queued(), 1u);
  EXPECT_EQ(q.release(running.ticket), std::vector<Ticket>{next.ticket});
  EXPECT_FALSE(q.granted(gone.ticket));
  EXPECT_FALSE(q.withdraw(gone.ticket));
}

// A grant that raced a timeout: withdraw says the slot is held, and the
// caller releases it, which hands it on.
TEST(AdmissionQueue, WithdrawAfterAGrantHoldsTheSlot) {
  auto q = queueOf(1);
  auto running = q.admit("a", "");
  auto late = q.admit("a", "");
  auto after = q.admit("a", "");
  q.release(running.ticket);
  EXPECT_FALSE(q.withdraw(late.ticket));  // granted meanwhile
  EXPECT_EQ(q.active(), 1u);
  EXPECT_EQ(q.release(late.ticket), std::vector<Ticket>{after.ticket});
}

TEST(AdmissionQueue, NewcomersDoNotOvertakeTheQueue) {
  auto q = queueOf(1);
  auto running = q.admit("a", "");
  auto waiting = q.admit("a", "");
  q.release(running.ticket);  // granted to `waiting`
  EXPECT_EQ(q.admit("b", "").verdict, V::kQueued);
  EXPECT_TRUE(q.granted(waiting.ticket));
}

// A transaction holding locks on the server passes the queue and the budget
// (it is counted): its COMMIT never waits behind statements waiting for its locks.
TEST(AdmissionQueue, BypassIsAdmittedOverTheBudgetAndCounted) {
  auto q = queueOf(1);
  auto running = q.admit("a", "");
  auto waiting = q.admit("b", "");
  auto txn = q.admit("c", "", true);
  EXPECT_EQ(txn.verdict, V::kAdmitted);
  EXPECT_EQ(q.active(), 2u);
  EXPECT_TRUE(q.release(running.ticket).empty());  // still at the budget: 1 of 1 with the bypass
  EXPECT_EQ(q.release(txn.ticket), std::vector<Ticket>{waiting.ticket});
}

TEST(AdmissionQueue, RaisingTheBudgetGrantsAtOnceLoweringLetsRunningFinish) {
  auto q = queueOf(1);
  auto a = q.admit("a", "");
  auto b = q.admit("b", "");
  auto c = q.admit("c", "");
  auto granted = q.setLimits({3, 1000});
  EXPECT_EQ(granted, (std::vector<Ticket>{b.ticket, c.ticket}));
  EXPECT_TRUE(q.setLimits({1, 1000}).empty());
  EXPECT_EQ(q.active(), 3u);
  auto d = q.admit("d", "");
  EXPECT_EQ(d.verdict, V::kQueued);
  EXPECT_TRUE(q.release(a.ticket).empty());
  EXPECT_TRUE(q.release(b.ticket).empty());
  EXPECT_EQ(q.release(c.ticket), std::vector<Ticket>{d.ticket});
}

TEST(AdmissionQueue, ReleasingAnUnknownTicketChangesNothing) {
  auto q = queueOf(1);
  auto a = q.admit("a", "");
  EXPECT_TRUE(q.release(12345).empty());
  EXPECT_EQ(q.active(), 1u);
  q.release(a.ticket);
  EXPECT_TRUE(q.release(a.ticket).empty());  // twice: nothing
  EXPECT_EQ(q.active(), 0u);
}

}  // namespace
}  // namespace sp::proxy
