// Scatter execution over scripted shards: what the client receives (packets
// and their sequence ids) and how a failing shard fails the statement.
#include <gtest/gtest.h>

#include "proxy/exec/scatter_execution.hpp"
#include "scripted_shard.hpp"

namespace sp::proxy {
namespace {

using protocol::ColumnType;
using test::column;
using test::RecordingClient;
using test::ScriptedShard;

routing::RouteTarget target(std::string shard, std::string backend, std::string sql) {
  return {std::move(backend), shard, "msg_" + shard.substr(1), std::move(sql)};
}

routing::MergeSpec sortedOn(uint32_t column_count, uint32_t key) {
  routing::MergeSpec spec;
  for (uint32_t i = 0; i < column_count; ++i) spec.columns.push_back({routing::MergeOp::kValue, i, 0, true, {}});
  spec.order_by = {{key, false}};
  return spec;
}

struct ScatterRun {
  std::vector<routing::RouteTarget> targets;
  std::vector<ScriptedShard> shards;
  std::vector<ScatterShard> scatter;
  RecordingClient client;
  ScatterOptions options;

  explicit ScatterRun(size_t n) : shards(n) {
    for (size_t i = 0; i < n; ++i) {
      targets.push_back(target("s" + std::to_string(i), "db" + std::to_string(i % 2),
                               "SELECT id, txt FROM msg_" + std::to_string(i) + " ORDER BY id"));
    }
    options.max_merge_bytes = 1 << 20;
    options.shard_timeout = std::chrono::milliseconds(50);
  }
  ScatterOutcome execute(const routing::MergeSpec& merge, uint8_t first_seq = 1) {
    scatter.clear();
    for (size_t i = 0; i < shards.size(); ++i) scatter.push_back({&shards[i], &targets[i]});
    return test::runToEnd(executeScatter(scatter, merge, client, first_seq, options));
  }
  // The client's rows as "v1|v2" (packets between the header and the end marker).
  std::vector<std::string> rows(size_t column_count) const {
    std::vector<std::string> out;
    const size_t first_row = 1 + column_count + 1;  // count, definitions, EOF
    for (size_t p = first_row; p + 1 < client.packets.size(); ++p) {
      auto row = protocol::decodeTextRow(client.packets[p].payload, column_count);
      EXPECT_TRUE(row.has_value());
      if (!row) continue;
      std::string text;
      for (size_t c = 0; c < row->size(); ++c) text += (c ? "|" : "") + std::string((*row)[c].value_or("NULL"));
      out.push_back(text);
    }
    return out;
  }
};

const std::vector<protocol::ColumnDefinition41> kColumns{column("id", ColumnType::kLong),
                                                         column("txt", ColumnType::kVarString)};

TEST(ScatterExecution, MergeSortsScriptedShardRowsAndNumbersPackets) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}, {"4", "d"}});
  run.shards[1].resultSet(kColumns, {{"2", "b"}, {"3", "c"}});
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_FALSE(outcome.error) << outcome.error->message;
  EXPECT_FALSE(outcome.client_failed);
  EXPECT_EQ(outcome.rows, 4u);
  EXPECT_EQ(run.rows(2), (std::vector<std::string>{"1|a", "2|b", "3|c", "4|d"}));
  // count, 2 definitions, EOF, 4 rows, EOF: sequence ids 1..9 without gaps.
  ASSERT_EQ(run.client.packets.size(), 9u);
  for (size_t i = 0; i < run.client.packets.size(); ++i) EXPECT_EQ(run.client.packets[i].seq, i + 1);
  EXPECT_TRUE(protocol::isEofPacket(run.client.packets.back().payload));
  // Each shard got its own SQL as one COM_QUERY, and was read to its end.
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(run.shards[i].sent.size(), 1u);
    EXPECT_EQ(run.shards[i].sent[0], "\x03" + run.targets[i].sql);
    EXPECT_TRUE(run.shards[i].done());
    EXPECT_TRUE(run.shards[i].scriptDone());
  }
}

TEST(ScatterExecution, AggregatesAcrossShards) {
  ScatterRun run(3);
  routing::MergeSpec count;
  count.aggregate = true;
  count.columns = {{routing::MergeOp::kCount, 0, 0, true, {}}};
  const std::vector cols{column("COUNT(*)", ColumnType::kLongLong)};
  run.shards[0].resultSet(cols, {{"3"}});
  run.shards[1].resultSet(cols, {{"0"}});
  run.shards[2].resultSet(cols, {{"4"}});
  auto outcome = run.execute(count);
  ASSERT_FALSE(outcome.error) << outcome.error->message;
  EXPECT_EQ(run.rows(1), (std::vector<std::string>{"7"}));
}

TEST(ScatterExecution, DeprecateEofClientGetsNoColumnEofAndAnOkEnd) {
  ScatterRun run(2);
  run.options.client_capabilities = protocol::cap::kProtocol41 | protocol::cap::kDeprecateEof;
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].resultSet(kColumns, {});
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_FALSE(outcome.error);
  ASSERT_EQ(run.client.packets.size(), 5u);  // count, 2 definitions, row, end
  EXPECT_EQ(run.client.packets.back().payload[0], protocol::kEofHeader);
  EXPECT_GT(run.client.packets.back().payload.size(), 5u);  // the OK form, not a classic EOF
}

TEST(ScatterExecution, ShardServerErrorIsRelabelledWithTheShardAndKeepsItsCode) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].err(1146, "42S02", "Table 'app.msg_1' doesn't exist");
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->error_code, 1146);
  EXPECT_EQ(outcome.error->sql_state, "42S02");
  EXPECT_EQ(outcome.error->message, "shardproxy: shard s1 (msg_1 on backend db1): Table 'app.msg_1' doesn't exist");
  EXPECT_EQ(outcome.error_seq, 1);          // nothing was sent before it
  EXPECT_TRUE(run.client.packets.empty());
  EXPECT_TRUE(run.shards[1].done());        // its answer was read whole: reusable
}

TEST(ScatterExecution, ErrorAfterRowsContinuesTheSequence) {
  ScatterRun run(2);
  routing::MergeSpec concat;  // row mode, `*`: shard order
  run.shards[0].resultSet(kColumns, {{"1", "a"}, {"2", "b"}});
  // Shard 1: its header, then an interruption mid-result.
  run.shards[1].header(kColumns).err(1317, "70100", "Query execution was interrupted");
  auto outcome = run.execute(concat);
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->error_code, 1317);
  EXPECT_NE(outcome.error->message.find("shard s1"), std::string::npos);
  // The error follows the packets already sent, numbered after them.
  ASSERT_FALSE(run.client.packets.empty());
  EXPECT_EQ(outcome.error_seq, run.client.packets.back().seq + 1);
}

TEST(ScatterExecution, ShardTimeoutFailsWith9003) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].failure(ChannelError::kTimeout);
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_TRUE(outcome.error);
  EXPECT_TRUE(outcome.shard_timed_out);
  EXPECT_EQ(outcome.error->error_code, 9003);
  EXPECT_NE(outcome.error->message.find("shard s1 (msg_1 on backend db1) failed: no answer within 50 ms"),
            std::string::npos)
      << outcome.error->message;
}

TEST(ScatterExecution, LostShardDuringRowsFailsWith9002) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].header(kColumns).failure(ChannelError::kLost);
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_TRUE(outcome.error);
  EXPECT_FALSE(outcome.shard_timed_out);
  EXPECT_EQ(outcome.error->error_code, 9002);
  EXPECT_NE(outcome.error->message.find("connection lost during the query"), std::string::npos);
  EXPECT_TRUE(run.shards[1].broken());
}

TEST(ScatterExecution, MergeBeyondTheMemoryCapFails) {
  ScatterRun run(2);
  run.options.max_merge_bytes = 8;
  run.shards[0].resultSet(kColumns, {{"1", "aaaaaaaaaaaaaaaa"}, {"3", "c"}});
  run.shards[1].resultSet(kColumns, {{"2", "bbbbbbbbbbbbbbbb"}});
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->error_code, 1105);
  EXPECT_NE(outcome.error->message.find("scatter.max_merge_bytes"), std::string::npos);
}

TEST(ScatterExecution, ShardsWithDriftedColumnsFailWith9005) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].resultSet({column("id", ColumnType::kLong), column("body", ColumnType::kVarString)}, {{"2", "b"}});
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->error_code, 9005);
  EXPECT_NE(outcome.error->message.find("shard s1"), std::string::npos) << outcome.error->message;
  EXPECT_EQ(outcome.rows, 0u);
}

TEST(ScatterExecution, GlobalMergeBudgetExhaustedIsReportedToTheCaller) {
  ScatterRun run(2);
  routing::MergeBudget budget(routing::MergeBudget::kStep);
  routing::MergeBudget::Reservation other(budget);
  ASSERT_TRUE(other.cover(1));  // another statement holds the whole budget
  routing::MergeBudget::Reservation mine(budget);
  run.options.merge_memory = &mine;
  run.shards[0].resultSet(kColumns, {{"1", "a"}, {"3", "c"}});
  run.shards[1].resultSet(kColumns, {{"2", "b"}});
  auto outcome = run.execute(sortedOn(2, 0));
  EXPECT_TRUE(outcome.merge_memory_exhausted);
  EXPECT_FALSE(outcome.error);  // the caller words the 9006
  EXPECT_EQ(outcome.error_seq, 1u + 1 + 2 + 1);  // after the header: count, 2 definitions, EOF
}

TEST(ScatterExecution, ReportsMergedRowBytesAndPeak) {
  ScatterRun run(2);
  run.shards[0].resultSet(kColumns, {{"1", "a"}, {"4", "d"}});
  run.shards[1].resultSet(kColumns, {{"2", "b"}, {"3", "c"}});
  auto outcome = run.execute(sortedOn(2, 0));
  ASSERT_FALSE(outcome.error) << outcome.error->message;
  uint64_t row_bytes = 0;
  for (size_t p = 4; p + 1 < run.client.packets.size(); ++p) row_bytes += run.client.packets[p].payload.size();
  EXPECT_EQ(outcome.row_bytes, row_bytes);
  EXPECT_GT(outcome.merge_peak_bytes, 0u);
}

TEST(ScatterExecution, WaitsForAShardWithoutBufferedDataAfterFlushingTheClient) {
  ScatterRun run(2);
  routing::MergeSpec concat;
  run.shards[0].resultSet(kColumns, {{"1", "a"}});
  run.shards[1].header(kColumns).row({"2", "b"}, /*after_wait=*/true).eof();
  auto outcome = run.execute(concat);
  ASSERT_FALSE(outcome.error) << outcome.error->message;
  EXPECT_EQ(run.rows(2), (std::vector<std::string>{"1|a", "2|b"}));
  EXPECT_GE(run.client.flushes, 1);  // merged rows left before waiting
}

TEST(ScatterExecution, ClientGoneEndsTheExecution) {
  ScatterRun run(1);
  run.client.flush_fails = true;
  routing::MergeSpec concat;
  run.shards[0].header(kColumns).row({"1", "a"}).row({"2", "b"}, /*after_wait=*/true).eof();
  auto outcome = run.execute(concat);
  EXPECT_TRUE(outcome.client_failed);
  EXPECT_FALSE(run.shards[0].done());  // left mid-answer: the caller must not pool it
}

}  // namespace
}  // namespace sp::proxy
