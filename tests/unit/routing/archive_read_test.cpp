// Hot-then-cold reads: `archive:` in the shard map (validation, canonical
// form) and the SELECT rewrite onto the union of the shard's hot and cold
// tables; writes stay on the hot table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/plan.hpp"
#include "routing/plan_cache.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


std::string mapText(std::string_view archive) {
  return "version: 1\n"
         "tables:\n"
         "  msg:\n"
         "    key: conv_id\n"
         "    method: mod\n"
         "    shards: 16\n"
         "    table: \"msg_{shard:02}\"\n"
         "    backends: {db0: \"0-7\", db1: \"8-15\"}\n"
         "    scatter: allow\n" +
         std::string(archive);
}

std::shared_ptr<const CompiledShardMap> archivedMap() {
  auto map = compileShardMap(mapText("    archive: {table: \"msg_archive_{shard:02}\"}\n"), kBackends);
  EXPECT_TRUE(map.has_value()) << (map ? "" : formatShardMapIssues(map.error(), "map"));
  return map ? *map : nullptr;
}

std::string routedSql(const CompiledShardMap& map, std::string_view sql) {
  PlannerInput input{map, "db0"};
  Plan plan = planQuery(sql, input);
  EXPECT_EQ(plan.kind, PlanKind::kRoute) << sql << (plan.refusal ? ": " + plan.refusal->message : "");
  return plan.targets.empty() ? "" : plan.targets[0].sql;
}

TEST(ArchiveRead, MapNamesTheColdTableOfEveryShard) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  const TableRule* msg = map->findTable("msg");
  EXPECT_EQ(msg->archive_template, "msg_archive_{shard:02}");
  EXPECT_EQ(msg->shardOf(7).archive_table, "msg_archive_07");
  EXPECT_EQ(msg->shardOf(31).archive_table, "msg_archive_15");
  auto plain = compileShardMap(mapText(""), kBackends);
  ASSERT_TRUE(plain);
  EXPECT_NE((*plain)->checksum(), map->checksum());  // the archive is part of the map's meaning
  EXPECT_TRUE((*plain)->findTable("msg")->shards[0].archive_table.empty());
}

TEST(ArchiveRead, MapRefusesBadArchives) {
  auto issues = [](std::string_view archive) {
    auto map = compileShardMap(mapText(archive), kBackends);
    EXPECT_FALSE(map.has_value()) << archive;
    return map ? std::string() : formatShardMapIssues(map.error(), "map");
  };
  EXPECT_NE(issues("    archive: {table: \"msg_{shard:02}\"}\n").find("also produced by"), std::string::npos);
  EXPECT_NE(issues("    archive: {table: \"msg_archive\"}\n").find("placeholder"), std::string::npos);
  EXPECT_NE(issues("    archive: {}\n").find("missing required key 'table'"), std::string::npos);
  EXPECT_NE(issues("    archive: {table: \"a_{shard}\", tabel: x}\n").find("tabel"), std::string::npos);
}

std::string guard(std::string_view hot, std::string_view key) {
  return "`seq` < (SELECT IFNULL(MIN(`seq`), 18446744073709551615) FROM " + std::string(hot) + " WHERE `conv_id` = " +
         std::string(key) + ")";
}

TEST(ArchiveRead, RoutedSelectReadsHotAndCold) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  // ORDER BY / LIMIT pushed into both branches, the cold one guarded by the hot table's lowest seq.
  EXPECT_EQ(routedSql(*map, "SELECT seq, content FROM msg WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50"),
            "SELECT seq, content FROM ((SELECT * FROM `msg_07` AS `msg_07` WHERE (conv_id = 7 AND seq > 100) "
            "ORDER BY seq LIMIT 50) UNION ALL (SELECT * FROM `msg_archive_07` AS `msg_07` WHERE (conv_id = 7 AND "
            "seq > 100) AND " + guard("`msg_07`", "7") + " ORDER BY seq LIMIT 50)) AS `msg_07` "
            "WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50");
  // No ORDER BY / LIMIT: the whole union, still guarded. A client alias is kept; qualifiers keep working.
  EXPECT_EQ(routedSql(*map, "SELECT m.seq FROM msg AS m WHERE m.conv_id = 9 AND m.seq = 3"),
            "SELECT m.seq FROM (SELECT * FROM `msg_09` UNION ALL SELECT * FROM `msg_archive_09` WHERE " +
                guard("`msg_09`", "9") + ") AS m WHERE m.conv_id = 9 AND m.seq = 3");
  EXPECT_EQ(routedSql(*map, "SELECT msg.seq FROM im.msg WHERE msg.conv_id = 25"),
            "SELECT msg_09.seq FROM (SELECT * FROM im.`msg_09` UNION ALL SELECT * FROM im.`msg_archive_09` WHERE " +
                guard("im.`msg_09`", "25") + ") AS `msg_09` WHERE msg_09.conv_id = 25");
}

TEST(ArchiveRead, PushdownKeepsAliasesQualifiersAndOffsets) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  // LIMIT offset, count: each branch keeps offset + count rows; qualifiers renamed inside the branches too.
  EXPECT_EQ(routedSql(*map, "SELECT m.seq FROM msg m WHERE m.conv_id = 9 ORDER BY m.seq DESC LIMIT 10, 5"),
            "SELECT m.seq FROM ((SELECT * FROM `msg_09` AS m WHERE (m.conv_id = 9) ORDER BY m.seq DESC LIMIT 15) "
            "UNION ALL (SELECT * FROM `msg_archive_09` AS m WHERE (m.conv_id = 9) AND " + guard("`msg_09`", "9") +
            " ORDER BY m.seq DESC LIMIT 15)) m WHERE m.conv_id = 9 ORDER BY m.seq DESC LIMIT 10, 5");
  EXPECT_EQ(routedSql(*map, "SELECT msg.seq FROM msg WHERE msg.conv_id = 9 ORDER BY msg.seq LIMIT 2 OFFSET 3"),
            "SELECT msg_09.seq FROM ((SELECT * FROM `msg_09` AS `msg_09` WHERE (msg_09.conv_id = 9) ORDER BY "
            "msg_09.seq LIMIT 5) UNION ALL (SELECT * FROM `msg_archive_09` AS `msg_09` WHERE (msg_09.conv_id = 9) AND " +
                guard("`msg_09`", "9") + " ORDER BY msg_09.seq LIMIT 5)) AS `msg_09` WHERE msg_09.conv_id = 9 "
            "ORDER BY msg_09.seq LIMIT 2 OFFSET 3");
}

TEST(ArchiveRead, ShapesThatKeepTheWholeUnion) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  const std::string whole = "(SELECT * FROM `msg_07` UNION ALL SELECT * FROM `msg_archive_07` WHERE " +
                            guard("`msg_07`", "7") + ") AS `msg_07`";
  // Limiting rows per branch would change these answers (or the parameter count).
  for (std::string_view sql : {
           "SELECT COUNT(*) FROM msg WHERE conv_id = 7 ORDER BY seq LIMIT 5",
           "SELECT DISTINCT sender_uid FROM msg WHERE conv_id = 7 ORDER BY sender_uid LIMIT 5",
           "SELECT sender_uid FROM msg WHERE conv_id = 7 GROUP BY sender_uid ORDER BY sender_uid LIMIT 5",
           "SELECT seq FROM msg WHERE conv_id = 7 ORDER BY 1 LIMIT 5",
           "SELECT content AS seq FROM msg WHERE conv_id = 7 ORDER BY seq LIMIT 5",
           "SELECT seq FROM msg WHERE conv_id = 7 ORDER BY seq + 1 LIMIT 5",
           "SELECT seq FROM msg WHERE conv_id = 7 ORDER BY seq",
           "SELECT seq, ROW_NUMBER() OVER (ORDER BY seq) FROM msg WHERE conv_id = 7 ORDER BY seq LIMIT 5",
           "SELECT seq FROM msg WHERE conv_id = 7 ORDER BY seq LIMIT 5 FOR UPDATE",
       }) {
    std::string routed = routedSql(*map, sql);
    EXPECT_NE(routed.find(whole), std::string::npos) << sql << "\n" << routed;
  }
  // A `?` in the WHERE is bound by the backend: the branches must not repeat it.
  PlannerInput input{*map, "db0"};
  std::vector<ParamValue> params(1);
  params[0].kind = ParamValue::Kind::kUnsigned;
  params[0].u = 100;
  input.params = params;
  Plan plan = planQuery("SELECT seq FROM msg WHERE conv_id = 7 AND seq > ? ORDER BY seq LIMIT 5", input);
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_NE(plan.targets[0].sql.find(whole), std::string::npos) << plan.targets[0].sql;
}

TEST(ArchiveRead, NoGuardWithoutOneKeyValue) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  // Two conversations of shard 07: the guard would be one conversation's.
  EXPECT_EQ(routedSql(*map, "SELECT seq FROM msg WHERE conv_id IN (7, 23)"),
            "SELECT seq FROM (SELECT * FROM `msg_07` UNION ALL SELECT * FROM `msg_archive_07`) AS `msg_07` "
            "WHERE conv_id IN (7, 23)");
}

TEST(ArchiveRead, SeqColumnIsConfigurable) {
  auto map = compileShardMap(mapText("    archive: {table: \"msg_archive_{shard:02}\", seq_column: msg_no}\n"),
                             kBackends);
  ASSERT_TRUE(map.has_value()) << formatShardMapIssues(map.error(), "map");
  EXPECT_EQ((*map)->findTable("msg")->archive_seq_column, "msg_no");
  EXPECT_NE(routedSql(**map, "SELECT * FROM msg WHERE conv_id = 7").find("`msg_no` < (SELECT IFNULL(MIN(`msg_no`)"),
            std::string::npos);
  auto bad = compileShardMap(mapText("    archive: {table: \"a_{shard:02}\", seq_column: \"x y\"}\n"), kBackends);
  EXPECT_FALSE(bad.has_value());
}

TEST(ArchiveRead, PlanCacheGivesTheSameSqlAsThePlanner) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  PlanCache cache;
  PlannerInput input{*map, "db0"};
  // The same shape with other literals: each use routes with its own values (the guard's key, the
  // branches' copies of the WHERE and LIMIT), also once the shape is cached.
  for (int round = 0; round < 2; ++round) {
    for (std::string_view sql : {"SELECT seq FROM msg WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50",
                                 "SELECT seq FROM msg WHERE conv_id = 23 AND seq > 3 ORDER BY seq LIMIT 2",
                                 "SELECT seq FROM msg WHERE conv_id = 23 AND seq = 3",
                                 "SELECT seq FROM msg WHERE conv_id = 7 AND seq = 9"}) {
      Plan cached = cache.plan(sql, input);
      ASSERT_EQ(cached.kind, PlanKind::kRoute) << sql;
      EXPECT_EQ(cached.targets[0].sql, routedSql(*map, sql)) << sql;
    }
  }
  EXPECT_NE(routedSql(*map, "SELECT seq FROM msg WHERE conv_id = 23 AND seq > 3 ORDER BY seq LIMIT 2")
                .find("(conv_id = 23 AND seq > 3) AND `seq` < (SELECT IFNULL(MIN(`seq`), 18446744073709551615) FROM "
                      "`msg_07` WHERE `conv_id` = 23) ORDER BY seq LIMIT 2"),
            std::string::npos);
}

TEST(ArchiveRead, WritesTouchOnlyTheHotTable) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  EXPECT_EQ(routedSql(*map, "INSERT INTO msg (conv_id, seq) VALUES (7, 1)"), "INSERT INTO msg_07 (conv_id, seq) VALUES (7, 1)");
  EXPECT_EQ(routedSql(*map, "UPDATE msg SET status = 1 WHERE conv_id = 7 AND seq = 1"),
            "UPDATE msg_07 SET status = 1 WHERE conv_id = 7 AND seq = 1");
  EXPECT_EQ(routedSql(*map, "DELETE FROM msg WHERE conv_id = 7"), "DELETE FROM msg_07 WHERE conv_id = 7");
}

TEST(ArchiveRead, ScatterShardsReadHotAndColdToo) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0"};
  Plan plan = planQuery("SELECT COUNT(*) FROM msg", input);
  ASSERT_EQ(plan.kind, PlanKind::kScatter);
  ASSERT_EQ(plan.scatter->targets.size(), 16u);
  EXPECT_NE(plan.scatter->targets[3].sql.find("UNION ALL SELECT * FROM `msg_archive_03`"), std::string::npos)
      << plan.scatter->targets[3].sql;
}

const char* const kChanMap =
    "version: 1\n"
    "tables:\n"
    "  chan:\n"
    "    key: peer_id\n"
    "    method: bucket\n"
    "    key_prefix: \"channel:\"\n"
    "    buckets: 64\n"
    "    table: \"chan_{shard}\"\n"
    "    shards:\n"
    "      s00: {buckets: \"0-31\", backend: db0}\n"
    "      s01: {buckets: \"32-63\", backend: db1}\n"
    "    month: {column: message_month, time_column: message_time}\n";

TEST(Backfill, ViewsRouteWritesToTheBackfillTableAndReadBoth) {
  auto map = compileShardMap(std::string(kChanMap) + "    backfill: {table: \"chan_backfill_{shard}\"}\n", kBackends);
  ASSERT_TRUE(map.has_value()) << formatShardMapIssues(map.error(), "map");
  const TableRule* chan = (*map)->findTable("chan");
  EXPECT_EQ(chan->shards[0].backfill_table, "chan_backfill_s00");
  EXPECT_EQ(chan->shards[0].physical_table, "chan_s00");  // the map itself routes to the month table
  auto plain = compileShardMap(kChanMap, kBackends);
  ASSERT_TRUE(plain.has_value());
  EXPECT_NE((*plain)->checksum(), (*map)->checksum());
  EXPECT_EQ((*plain)->backfillView(true), nullptr);
  ASSERT_NE((*map)->backfillView(true), nullptr);
  ASSERT_NE((*map)->backfillView(false), nullptr);

  const std::string insert = "INSERT INTO chan (peer_id, message_id, message_month, message_time) VALUES "
                             "(1, 5, '2024-11-01', '2024-11-20 08:00:00')";
  std::string routed = routedSql(*(*map)->backfillView(true), insert);
  EXPECT_NE(routed.find("INSERT INTO chan_backfill_s"), std::string::npos) << routed;
  // Reads: month table and backfill table as one derived table; no seq guard (not a msg archive).
  std::string read = routedSql(*(*map)->backfillView(false),
                               "SELECT message_id FROM chan WHERE peer_id = 1 AND message_month >= '2024-10-01' "
                               "AND message_month < '2025-01-01' ORDER BY message_id LIMIT 5");
  EXPECT_NE(read.find("UNION ALL (SELECT * FROM `chan_backfill_s"), std::string::npos) << read;
  EXPECT_EQ(read.find("IFNULL"), std::string::npos) << read;
}

TEST(Backfill, OnlyForMonthTables) {
  auto map = compileShardMap(mapText("    backfill: {table: \"msg_backfill_{shard:02}\"}\n"), kBackends);
  ASSERT_FALSE(map.has_value());
  EXPECT_NE(formatShardMapIssues(map.error(), "map").find("only for a table with 'month'"), std::string::npos);
  auto clash = compileShardMap(std::string(kChanMap) + "    backfill: {table: \"chan_{shard}\"}\n", kBackends);
  ASSERT_FALSE(clash.has_value());
  EXPECT_NE(formatShardMapIssues(clash.error(), "map").find("also produced by"), std::string::npos);
}

}  // namespace
}  // namespace sp::routing
