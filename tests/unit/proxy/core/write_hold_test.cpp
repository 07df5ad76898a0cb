// The write hold of a move's cut-over, driven on a real io_context: tickets
// of writes to watched keys (given back after autocommit statements or at
// transaction end), waiting while held, release, re-plan after the switch,
// the time and count bounds, transactions older than the move.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "proxy/core/write_hold.hpp"

namespace sp::proxy {
namespace {

using namespace std::chrono_literals;

routing::MovingKeys keyFortyTwo() {
  routing::MovingKeys k;
  k.table = "t";
  k.kind = routing::MoveKind::kKey;
  k.key = 42;
  return k;
}

struct WriteHoldTest : ::testing::Test {
  asio::io_context io;
  WriteHold hold;
  routing::TableRule rule;
  std::vector<uint64_t> keys;
  routing::Plan plan;

  WriteHoldTest() {
    rule.name = "t";
    keys = {42};
    plan.kind = routing::PlanKind::kRoute;
    plan.table = &rule;
    plan.key_values = keys;
    plan.targets.push_back({"db0", "s01", "t_s01", "INSERT ..."});
  }

  // Runs gate.admit(plan, version) to completion; the admission and when it finished.
  struct Run {
    std::optional<Admission> admission;
    std::chrono::steady_clock::time_point finished;
  };
  std::shared_ptr<Run> start(SessionWriteGate& gate, uint64_t version) {
    auto run = std::make_shared<Run>();
    asio::co_spawn(
        io,
        [&gate, run, version, this]() -> awaitable<void> {
          run->admission = co_await gate.admit(plan, version);
          run->finished = std::chrono::steady_clock::now();
        },
        asio::detached);
    return run;
  }
  void runFor(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }
};

TEST_F(WriteHoldTest, WritesToOtherKeysAndTablesTakeNoTicket) {
  SessionWriteGate gate(hold);
  auto run = start(gate, 1);
  runFor(10ms);
  EXPECT_EQ(run->admission, Admission::kPass);  // no watch at all
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  keys = {41};
  plan.key_values = keys;
  run = start(gate, 1);
  runFor(10ms);
  EXPECT_EQ(run->admission, Admission::kPass);
  EXPECT_EQ(gate.tickets(), 0u);
  EXPECT_EQ(hold.inFlight(id), 0u);
}

TEST_F(WriteHoldTest, TicketsFollowStatementsAndTransactions) {
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  SessionWriteGate gate(hold);
  auto run = start(gate, 1);
  runFor(10ms);
  EXPECT_EQ(run->admission, Admission::kPass);
  EXPECT_EQ(hold.inFlight(id), 1u);
  gate.settle(false);  // autocommit statement answered
  EXPECT_EQ(hold.inFlight(id), 0u);
  run = start(gate, 1);
  runFor(10ms);
  gate.settle(true);   // inside a transaction: kept
  EXPECT_EQ(hold.inFlight(id), 1u);
  start(gate, 1);      // a second write of the same transaction: no second ticket
  runFor(10ms);
  EXPECT_EQ(hold.inFlight(id), 1u);
  gate.settle(false);  // COMMIT
  EXPECT_EQ(hold.inFlight(id), 0u);
}

TEST_F(WriteHoldTest, HeldWritesWaitUntilReleased) {
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(id);
  SessionWriteGate gate(hold);
  auto run = start(gate, 1);
  runFor(30ms);
  EXPECT_FALSE(run->admission);
  EXPECT_EQ(hold.waiting(), 1u);
  auto released_at = std::chrono::steady_clock::now();
  hold.release(id);
  runFor(30ms);
  ASSERT_TRUE(run->admission);
  EXPECT_EQ(*run->admission, Admission::kPass);
  EXPECT_GE(run->finished, released_at);
  EXPECT_EQ(hold.inFlight(id), 1u);  // it goes on to the source with a ticket
  EXPECT_EQ(hold.waiting(), 0u);
}

TEST_F(WriteHoldTest, AfterTheSwitchOlderPlansReplan) {
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(id);
  SessionWriteGate gate(hold);
  auto waiting = start(gate, 8);
  runFor(20ms);
  hold.switched(id, 9);
  runFor(20ms);
  EXPECT_EQ(waiting->admission, Admission::kReplan);
  EXPECT_EQ(gate.tickets(), 0u);
  // A transaction still planning with map 8 after the switch re-plans too.
  auto late = start(gate, 8);
  runFor(10ms);
  EXPECT_EQ(late->admission, Admission::kReplan);
  auto fresh = start(gate, 9);
  runFor(10ms);
  EXPECT_EQ(fresh->admission, Admission::kPass);
  EXPECT_EQ(hold.inFlight(id), 0u);
}

TEST_F(WriteHoldTest, WaitIsBoundedInTimeAndCount) {
  hold.setLimits({40ms, 1});
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(id);
  SessionWriteGate first(hold), second(hold);
  auto began = std::chrono::steady_clock::now();
  auto a = start(first, 1);
  auto b = start(second, 1);
  runFor(10ms);
  EXPECT_EQ(b->admission, Admission::kFull);
  runFor(100ms);
  ASSERT_TRUE(a->admission);
  EXPECT_EQ(*a->admission, Admission::kTimeout);
  EXPECT_GE(a->finished - began, 40ms);
  EXPECT_EQ(holdRefusal(Admission::kTimeout, hold.limits()).code, routing::move_error::kHoldTimeout);
  EXPECT_EQ(holdRefusal(Admission::kFull, hold.limits()).code, routing::move_error::kHoldFull);
}

TEST_F(WriteHoldTest, TransactionWithATicketPassesTheHold) {
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  SessionWriteGate gate(hold);
  start(gate, 1);
  runFor(10ms);
  gate.settle(true);
  hold.hold(id);
  auto again = start(gate, 1);  // must finish, or the drain would wait for itself
  runFor(10ms);
  EXPECT_EQ(again->admission, Admission::kPass);
}

TEST_F(WriteHoldTest, TransactionsOlderThanTheWatchAreCounted) {
  SessionWriteGate old_txn(hold), new_txn(hold);
  old_txn.beginCommand();
  old_txn.settle(true);  // BEGIN before the move
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  new_txn.beginCommand();
  new_txn.settle(true);  // BEGIN after it
  EXPECT_EQ(hold.olderTransactions(id), 1u);
  old_txn.beginCommand();
  old_txn.settle(false);  // COMMIT
  EXPECT_EQ(hold.olderTransactions(id), 0u);
  new_txn.settle(false);
}

// A watch created at the cut-over itself (a fleet fence on another proxy):
// a write admitted before it took no ticket, yet the drain waits for it.
TEST_F(WriteHoldTest, WritesAdmittedBeforeTheWatchAreCountedUntilSettled) {
  SessionWriteGate early(hold);
  early.beginCommand();
  auto run = start(early, 1);
  runFor(5ms);
  ASSERT_EQ(run->admission, Admission::kPass);  // no watch yet: no ticket
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(id);
  EXPECT_EQ(hold.inFlight(id), 0u);
  EXPECT_EQ(hold.olderWrites(id), 1u);
  EXPECT_FALSE(hold.drained(id));
  early.settle(false);  // its answer went out
  EXPECT_EQ(hold.olderWrites(id), 0u);
  EXPECT_TRUE(hold.drained(id));
  // A write admitted after the watch is not "older": it waits for the hold instead.
  SessionWriteGate late(hold);
  late.beginCommand();
  auto waiting = start(late, 1);
  runFor(5ms);
  EXPECT_FALSE(waiting->admission);
  EXPECT_TRUE(hold.drained(id));
  hold.release(id);
  runFor(5ms);
  EXPECT_EQ(waiting->admission, Admission::kPass);
  late.settle(false);
}

// On the mover, the fleet's fence is a second watch of the keys its move
// already holds: the writes waiting in the first hold are not on their way
// to a backend, so the fence's drain must not wait for them.
TEST_F(WriteHoldTest, AWriteWaitingInAHoldIsNotOlderForANewerWatch) {
  uint64_t move = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(move);
  SessionWriteGate gate(hold);
  gate.beginCommand();
  auto waiting = start(gate, 1);
  runFor(5ms);
  EXPECT_FALSE(waiting->admission);
  uint64_t fence = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(fence);
  EXPECT_EQ(hold.olderWrites(fence), 0u);
  EXPECT_TRUE(hold.drained(fence));
  hold.switched(move, 2);
  runFor(5ms);
  EXPECT_EQ(waiting->admission, Admission::kReplan);
  EXPECT_EQ(hold.olderWrites(fence), 1u);  // running again (it re-plans): counted until settled
  gate.settle(false);
  EXPECT_TRUE(hold.drained(fence));
}

TEST_F(WriteHoldTest, RefusingFenceRefusesWaitingAndNewWrites) {
  uint64_t id = hold.watch(keyFortyTwo(), "t_s01");
  hold.hold(id);
  SessionWriteGate a(hold), b(hold);
  auto waiting = start(a, 1);
  runFor(5ms);
  EXPECT_FALSE(waiting->admission);
  hold.refuse(id, true);  // the proxy lost etcd while the fence stands
  runFor(5ms);
  EXPECT_EQ(waiting->admission, Admission::kUnsynchronised);
  auto fresh = start(b, 1);
  runFor(5ms);
  EXPECT_EQ(fresh->admission, Admission::kUnsynchronised);
  EXPECT_EQ(holdRefusal(Admission::kUnsynchronised, hold.limits()).code, 9138);
  hold.refuse(id, false);
  hold.switched(id, 2);  // resynchronised, the fence lifted after a switch to version 2
  auto replan = start(b, 1);
  runFor(5ms);
  EXPECT_EQ(replan->admission, Admission::kReplan);
  a.settle(false);
  b.settle(false);
}

TEST_F(WriteHoldTest, TransactionsBeforeAnEpochAreCounted) {
  SessionWriteGate txn(hold);
  txn.beginCommand();
  txn.settle(true);
  uint64_t marker = hold.advanceEpoch();
  EXPECT_EQ(hold.openTransactionsBefore(marker), 1u);
  txn.beginCommand();
  txn.settle(false);
  EXPECT_EQ(hold.openTransactionsBefore(marker), 0u);
}

TEST_F(WriteHoldTest, UnknownKeysMatchTheSourceTable) {
  hold.watch(keyFortyTwo(), "t_s01");
  WriteTouch touch{"t", {}, {"t_s01"}};
  EXPECT_EQ(hold.touched(touch).size(), 1u);
  touch.physical_tables = {"t_s02"};
  EXPECT_TRUE(hold.touched(touch).empty());
  std::vector<uint64_t> k = {7, 42};
  touch.key_values = k;
  EXPECT_EQ(hold.touched(touch).size(), 1u);
}

}  // namespace
}  // namespace sp::proxy
