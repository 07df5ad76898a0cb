// The write hold of a move's cut-over, driven on a real io_context: tickets
// of writes to watched keys (given back after autocommit statements or at
// transaction end), waiting while held, release, re-plan after the switch,
// the time and count bounds, transactions older than the move.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "proxy/write_hold.hpp"

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
