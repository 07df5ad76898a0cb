// Split-write execution over scripted shards: summed OKs, partial failures
// reported part by part, and the all-or-nothing form inside a transaction.
#include <gtest/gtest.h>

#include "proxy/exec/split_write_execution.hpp"
#include "scripted_shard.hpp"

namespace sp::proxy {
namespace {

using test::ScriptedShard;

struct SplitRun {
  std::vector<routing::RouteTarget> targets;
  std::vector<ScriptedShard> shards;
  std::vector<WritePart> parts;

  explicit SplitRun(size_t n) : shards(n) {
    for (size_t i = 0; i < n; ++i) {
      std::string k = std::to_string(i);
      targets.push_back({"db" + k, "s" + k, "msg_" + k, "INSERT INTO msg_" + k + " VALUES (" + k + ")"});
    }
  }
  SplitWriteResult execute() {
    parts.clear();
    for (size_t i = 0; i < shards.size(); ++i) parts.push_back({&targets[i], &shards[i], {}});
    return test::runToEnd(executeSplitWrite(parts, "INSERT", std::chrono::milliseconds(100)));
  }
};

TEST(SplitWriteExecution, SumsThePartsOks) {
  SplitRun run(3);
  run.shards[0].ok(2, 0, 0);
  run.shards[1].ok(3, 7, 1);
  run.shards[2].ok(1, 9, 2);
  auto result = run.execute();
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->affected_rows, 6u);
  EXPECT_EQ(result->last_insert_id, 7u);  // the first part (in row order) that generated one
  EXPECT_EQ(result->warnings, 3);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(run.shards[i].sent.size(), 1u);
    EXPECT_EQ(run.shards[i].sent[0], "\x03" + run.targets[i].sql);
  }
}

TEST(SplitWriteExecution, PartialFailureNamesEveryFailedAndEverySucceededShard) {
  SplitRun run(3);
  run.shards[0].ok(2);
  run.shards[1].err(1062, "23000", "Duplicate entry '5' for key 'PRIMARY'");
  run.shards[2].failure(ChannelError::kLost);
  auto result = run.execute();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().error_code, 9121);
  EXPECT_EQ(result.error().message,
            "shardproxy: INSERT split over 3 shards: 2 of them failed; nothing was rolled back. Failed: shard s1 "
            "(msg_1 on backend db1): ERROR 1062 (23000): Duplicate entry '5' for key 'PRIMARY'; shard s2 (msg_2 on "
            "backend db2): connection lost; the part may or may not have been applied. Succeeded: shard s0 (msg_0 "
            "on backend db0): 2 rows.");
  EXPECT_TRUE(run.parts[0].answer.ok);
  EXPECT_TRUE(run.shards[2].broken());
}

TEST(SplitWriteExecution, OneServerErrorEverywhereKeepsItsCode) {
  SplitRun run(2);
  run.shards[0].err(1146, "42S02", "Table 'app.msg_0' doesn't exist");
  run.shards[1].err(1146, "42S02", "Table 'app.msg_1' doesn't exist");
  auto result = run.execute();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().error_code, 1146);
  EXPECT_EQ(result.error().sql_state, "42S02");
  EXPECT_NE(result.error().message.find("Succeeded: none."), std::string::npos);
}

TEST(SplitWriteExecution, TimedOutPartIsReportedAsUnknown) {
  SplitRun run(2);
  run.shards[0].ok(1);
  run.shards[1].failure(ChannelError::kTimeout);
  auto result = run.execute();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().error_code, 9121);
  EXPECT_NE(result.error().message.find("no answer within 100 ms (scatter.shard_timeout_ms); its connection was "
                                        "closed and the part may or may not have been applied"),
            std::string::npos)
      << result.error().message;
}

constexpr uint16_t kInTrans = protocol::status::kInTrans | protocol::status::kAutocommit;

TEST(SplitWriteExecution, OnOneConnectionAllPartsThenReleaseTheSavepoint) {
  SplitRun run(2);
  ScriptedShard conn;
  conn.ok(2, 0, 0, kInTrans).ok(1, 0, 0, kInTrans).ok(0, 0, 0, kInTrans);
  auto out = test::runToEnd(executeSplitWriteOnOne(conn, run.targets, /*atomic=*/true, "INSERT", kInTrans));
  ASSERT_TRUE(out.result.has_value());
  EXPECT_EQ(out.result->affected_rows, 3u);
  EXPECT_FALSE(out.lost);
  EXPECT_EQ(out.status_flags, kInTrans);
  EXPECT_EQ(conn.sent, (std::vector<std::string>{"\x03" + run.targets[0].sql, "\x03" + run.targets[1].sql,
                                                 "\x03RELEASE SAVEPOINT shardproxy_split"}));
}

TEST(SplitWriteExecution, OnOneConnectionAFailedPartRollsTheEarlierOnesBack) {
  SplitRun run(3);
  ScriptedShard conn;
  conn.ok(2, 0, 0, kInTrans)
      .err(1062, "23000", "Duplicate entry '5' for key 'PRIMARY'")
      .ok(0, 0, 0, kInTrans)   // ROLLBACK TO SAVEPOINT
      .ok(0, 0, 0, kInTrans);  // RELEASE SAVEPOINT
  auto out = test::runToEnd(executeSplitWriteOnOne(conn, run.targets, /*atomic=*/true, "INSERT", kInTrans));
  ASSERT_FALSE(out.result.has_value());
  EXPECT_EQ(out.result.error().error_code, 1062);
  EXPECT_EQ(out.result.error().message,
            "shardproxy: shard s1 (msg_1 on backend db1): Duplicate entry '5' for key 'PRIMARY'; the statement's "
            "parts on other shards were rolled back (to a savepoint), the transaction is still open");
  EXPECT_EQ(out.status_flags, kInTrans);
  ASSERT_EQ(conn.sent.size(), 4u);  // the third part never ran
  EXPECT_EQ(conn.sent[2], "\x03ROLLBACK TO SAVEPOINT shardproxy_split");
}

TEST(SplitWriteExecution, OnOneConnectionWithoutSavepointTheServerEndedTheTransaction) {
  SplitRun run(2);
  ScriptedShard conn;
  conn.ok(2, 0, 0, kInTrans)
      .err(1213, "40001", "Deadlock found when trying to get lock; try restarting transaction")
      .err(1305, "42000", "SAVEPOINT shardproxy_split does not exist");
  auto out = test::runToEnd(executeSplitWriteOnOne(conn, run.targets, /*atomic=*/true, "INSERT", kInTrans));
  ASSERT_FALSE(out.result.has_value());
  EXPECT_EQ(out.result.error().error_code, 1213);
  EXPECT_EQ(out.result.error().message.find("rolled back (to a savepoint)"), std::string::npos);
  ASSERT_TRUE(out.status_flags);
  EXPECT_FALSE(*out.status_flags & protocol::status::kInTrans);
}

TEST(SplitWriteExecution, OnOneConnectionLostMidStatement) {
  SplitRun run(2);
  ScriptedShard conn;
  conn.ok(2).failure(ChannelError::kLost);
  auto out = test::runToEnd(executeSplitWriteOnOne(conn, run.targets, /*atomic=*/false, "INSERT", 0));
  EXPECT_TRUE(out.lost);
  EXPECT_FALSE(out.status_flags);
}

TEST(SplitWriteExecution, OnOneConnectionNotAtomicReportsThePartialFailure) {
  SplitRun run(2);
  ScriptedShard conn;
  conn.ok(2).err(1062, "23000", "Duplicate entry");
  auto out = test::runToEnd(executeSplitWriteOnOne(conn, run.targets, /*atomic=*/false, "REPLACE", 0));
  ASSERT_FALSE(out.result.has_value());
  EXPECT_EQ(out.result.error().error_code, 9121);
  EXPECT_NE(out.result.error().message.find("REPLACE split over 2 shards: 1 of them failed"), std::string::npos);
  EXPECT_EQ(out.status_flags, protocol::status::kAutocommit);
}

}  // namespace
}  // namespace sp::proxy
