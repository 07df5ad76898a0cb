// Binlog events of one backend to logical transactions
// (proxy/changes/change_assembler.hpp) and their JSON lines
// (change_json.hpp): rows of the streamed physical tables only, after the
// commit, maintenance (skip_replication) rows dropped, cut-over marks read.
#include <gtest/gtest.h>

#include "proxy/changes/change_assembler.hpp"
#include "proxy/changes/change_json.hpp"
#include "proxy/core/cutover_mark.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::proxy::changes {
namespace {

using protocol::BinlogEvent;
using protocol::BinlogRowsEvent;
using protocol::BinlogValue;

constexpr const char* kMap = R"(version: 1
tables:
  msg:
    key: conv_id
    method: mod
    shards: 4
    table: "msg_{shard:02}"
    backends: {db0: "0-1", db1: "2-3"}
    archive: {table: "msg_archive_{shard:02}"}
  tg_channel_message:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "tg_channel_message_{shard}"
    shards:
      s00: {buckets: "0-31", backend: db0}
      s01: {buckets: "32-63", backend: db1}
  user_read_cursor: {key: uid, method: mod, shards: 2, table: "urc_{shard}", backends: {db0: "0", db1: "1"}}
)";

std::shared_ptr<const routing::CompiledShardMap> compiled() {
  std::vector<std::string> names{"db0", "db1"};
  auto map = routing::compileShardMap(kMap, names);
  EXPECT_TRUE(map.has_value());
  return *map;
}

BinlogValue u(uint64_t v) { return BinlogValue{BinlogValue::Kind::kUInt, 0, v}; }
BinlogValue s(std::string text) {
  BinlogValue v;
  v.kind = BinlogValue::Kind::kBytes;
  v.text = std::move(text);
  return v;
}

BinlogEvent gtid(uint64_t seq, uint8_t flags = 0) {
  BinlogEvent e;
  e.header.server_id = 3307;
  e.body = protocol::BinlogGtidEvent{protocol::GtidEvent{seq, 0, flags}};
  return e;
}
BinlogEvent commit(uint32_t ts) {
  BinlogEvent e;
  e.header.timestamp = ts;
  e.body = protocol::BinlogCommitEvent{1};
  return e;
}
BinlogEvent rows(BinlogRowsEvent::Kind kind, std::string table, std::vector<std::vector<BinlogValue>> images,
                 uint16_t flags = 0, std::string schema = "im") {
  BinlogRowsEvent r;
  r.kind = kind;
  r.schema = std::move(schema);
  r.table = std::move(table);
  r.column_names = {"conv_id", "seq", "content"};
  r.rows = std::move(images);
  BinlogEvent e;
  e.header.flags = flags;
  e.body = std::move(r);
  return e;
}
BinlogEvent query(std::string text, uint32_t ts = 0) {
  BinlogEvent e;
  e.header.timestamp = ts;
  e.body = protocol::BinlogQueryEvent{"im", std::move(text)};
  return e;
}

class Assembler : public ::testing::Test {
 protected:
  std::optional<ChangeTransaction> feedAll(const std::vector<BinlogEvent>& events) {
    std::optional<ChangeTransaction> last;
    for (const auto& e : events) {
      auto r = assembler.feed(e);
      EXPECT_TRUE(r) << (r ? "" : r.error());
      if (r && *r) last = std::move(**r);
    }
    return last;
  }
  std::shared_ptr<const routing::CompiledShardMap> map = compiled();
  ChangeTables tables{*map, {"msg", "tg_channel_message"}};
  ChangeAssembler assembler{"db0", "im", tables, 100};
};

TEST_F(Assembler, MapsPhysicalTablesBackToLogicalOnes) {
  EXPECT_EQ(tables.find("msg_03")->name, "msg");
  EXPECT_EQ(tables.find("msg_archive_01")->key_column, "conv_id");
  EXPECT_EQ(tables.find("tg_channel_message_s01")->key_column, "peer_id");
  EXPECT_EQ(tables.find("urc_0"), nullptr);  // not streamed
  EXPECT_EQ(tables.find("msg_04"), nullptr);
  ChangeTables unknown(*map, {"msg", "nope"});
  EXPECT_EQ(unknown.unknown(), std::vector<std::string>{"nope"});
}

TEST_F(Assembler, ATransactionComesOutAtItsCommitWithEveryRow) {
  auto first = assembler.feed(gtid(81));
  ASSERT_TRUE(first && !*first);
  auto mid = assembler.feed(rows(BinlogRowsEvent::Kind::kInsert, "msg_01", {{u(5), u(1), s("hi")}}));
  ASSERT_TRUE(mid && !*mid);  // nothing before the commit
  auto txn = feedAll({rows(BinlogRowsEvent::Kind::kUpdate, "msg_01", {{u(5), u(1), s("hi")}, {u(5), u(1), s("ho")}}),
                      rows(BinlogRowsEvent::Kind::kDelete, "urc_0", {{u(5), u(1), s("x")}}),
                      rows(BinlogRowsEvent::Kind::kDelete, "msg_01", {{u(9), u(2), s("bye")}}, 0, "other"),
                      commit(1764859200)});
  ASSERT_TRUE(txn);
  EXPECT_EQ(txn->gtid, (StreamGtid{0, 3307, 81}));
  EXPECT_EQ(txn->timestamp, 1764859200u);
  ASSERT_EQ(txn->rows.size(), 2u);
  EXPECT_EQ(txn->rows[0].op, ChangeRow::Op::kInsert);
  EXPECT_EQ(txn->rows[1].op, ChangeRow::Op::kUpdate);
  EXPECT_EQ(changeJson(txn->rows[1], *txn, "db0:0-3307-81", true),
            R"({"table":"msg","key":5,"op":"update","before":{"conv_id":5,"seq":1,"content":"hi"},)"
            R"("after":{"conv_id":5,"seq":1,"content":"ho"},"ts":1764859200,"backend":"db0","gtid":"0-3307-81",)"
            R"("position":"db0:0-3307-81","last":true})");
}

TEST_F(Assembler, MaintenanceRowsAreDroppedButTheTransactionStillCounts) {
  auto txn = feedAll({gtid(82), rows(BinlogRowsEvent::Kind::kInsert, "tg_channel_message_s00",
                                     {{u(7), u(1), s("copied")}, {u(7), u(2), s("copied")}}, kSkipReplicationFlag),
                      commit(1)});
  ASSERT_TRUE(txn);
  EXPECT_TRUE(txn->rows.empty());
  EXPECT_EQ(txn->skipped_rows, 2u);
  EXPECT_EQ(txn->gtid->seq, 82u);  // the position still moves past it
}

TEST_F(Assembler, ATargetCutoverMarkWaitsForTheSourceGtid) {
  auto txn = feedAll({gtid(83, protocol::GtidEvent::kStandalone),
                      query("DROP TABLE IF EXISTS `__sp_cut_0-3307-90_db0` /* generated by server */", 5)});
  ASSERT_TRUE(txn);
  ASSERT_TRUE(txn->wait_for);
  EXPECT_EQ(txn->wait_for->backend, "db0");
  EXPECT_EQ(txn->wait_for->gtid, (StreamGtid{0, 3307, 90}));
  auto ddl = feedAll({gtid(84, protocol::GtidEvent::kStandalone), query("ALTER TABLE msg_01 ADD c INT")});
  ASSERT_TRUE(ddl);
  EXPECT_FALSE(ddl->wait_for);
  EXPECT_TRUE(ddl->rows.empty());
}

TEST(WaitIsOver, OnlyOnceTheSourceGtidIsPassed) {
  ChangePosition emitted;
  emitted.backends["db0"].advance({0, 3307, 89});
  const WaitFor wait{"db0", {0, 3307, 90}};
  EXPECT_FALSE(waitIsOver(wait, emitted));
  emitted.backends["db0"].advance({0, 3307, 90});
  EXPECT_TRUE(waitIsOver(wait, emitted));
  EXPECT_FALSE(waitIsOver(WaitFor{"db0", {1, 5, 1}}, emitted));  // another domain: not passed
  EXPECT_TRUE(waitIsOver(WaitFor{"db9", {0, 1, 1}}, emitted));   // not read by this stream
}

TEST_F(Assembler, RollbackDropsTheRows) {
  auto txn = feedAll({gtid(85), query("BEGIN"), rows(BinlogRowsEvent::Kind::kInsert, "msg_00", {{u(4), u(1), s("a")}}),
                      query("ROLLBACK")});
  ASSERT_TRUE(txn);
  EXPECT_TRUE(txn->rows.empty());
}

TEST_F(Assembler, RefusesWhatItCannotTurnIntoChanges) {
  auto e = rows(BinlogRowsEvent::Kind::kInsert, "msg_00", {{u(4)}});
  std::get<BinlogRowsEvent>(e.body).column_names.clear();
  ASSERT_TRUE(assembler.feed(gtid(86)));
  auto r = assembler.feed(e);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("binlog_row_metadata=FULL"), std::string::npos);
  ChangeAssembler small("db0", "im", tables, 1);
  ASSERT_TRUE(small.feed(gtid(87)));
  auto big = small.feed(rows(BinlogRowsEvent::Kind::kInsert, "msg_00", {{u(4), u(1), s("a")}, {u(4), u(2), s("b")}}));
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("max_transaction_events"), std::string::npos);
}

TEST(ChangeJson, ValuesByKind) {
  auto json = [](const BinlogValue& v) {
    std::string out;
    appendJsonValue(out, v);
    return out;
  };
  EXPECT_EQ(json(BinlogValue{}), "null");
  EXPECT_EQ(json(BinlogValue{BinlogValue::Kind::kInt, -3}), "-3");
  EXPECT_EQ(json(s("a\"b\\\n")), R"("a\"b\\\n")");
  EXPECT_EQ(json(s("\xe4\xbd\xa0")), "\"\xe4\xbd\xa0\"");
  EXPECT_EQ(json(s(std::string("\xff\x00", 2))), R"({"hex":"ff00"})");
  BinlogValue dec{BinlogValue::Kind::kDecimal};
  dec.text = "-12.340";
  EXPECT_EQ(json(dec), R"("-12.340")");
  BinlogValue inf{BinlogValue::Kind::kDouble};
  inf.d = 1.0 / 0.0;
  EXPECT_EQ(json(inf), "null");
  EXPECT_EQ(heartbeatJson("db0:"), R"({"heartbeat":true,"position":"db0:"})");
}

TEST(CutoverMark, RoundTripsAndRefusesOthers) {
  auto mark = parseCutoverMark(cutoverTargetMarkSql("db-0.a", "0-3307-9") + " /* generated by server */");
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->source_backend, "db-0.a");
  EXPECT_EQ(mark->source_gtid, "0-3307-9");
  EXPECT_FALSE(parseCutoverMark(cutoverSourceMarkSql()));
  EXPECT_FALSE(parseCutoverMark("DROP TABLE IF EXISTS `msg_01`"));
  EXPECT_FALSE(parseCutoverMark("DROP TABLE IF EXISTS `__sp_cut_0-1-2_`"));
  EXPECT_FALSE(parseCutoverMark("DROP TABLE IF EXISTS `__sp_cut_0-1-2_db0"));
  EXPECT_FALSE(parseCutoverMark("DROP TABLE IF EXISTS `__sp_cut_0x1_db0`"));
}

}  // namespace
}  // namespace sp::proxy::changes
