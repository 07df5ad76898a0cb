// Hot-then-cold reads: `archive:` in the shard map (validation, canonical
// form) and the SELECT rewrite onto the union of the shard's hot and cold
// tables; writes stay on the hot table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/plan.hpp"

namespace sp::routing {
namespace {

const std::vector<std::string> kBackends = {"db0", "db1"};

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

TEST(ArchiveRead, RoutedSelectReadsHotAndCold) {
  auto map = archivedMap();
  ASSERT_TRUE(map);
  EXPECT_EQ(routedSql(*map, "SELECT seq, content FROM msg WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50"),
            "SELECT seq, content FROM (SELECT * FROM `msg_07` UNION ALL SELECT * FROM `msg_archive_07`) AS `msg_07` "
            "WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50");
  // A client alias is kept; qualifiers keep working.
  EXPECT_EQ(routedSql(*map, "SELECT m.seq FROM msg AS m WHERE m.conv_id = 9 AND m.seq = 3"),
            "SELECT m.seq FROM (SELECT * FROM `msg_09` UNION ALL SELECT * FROM `msg_archive_09`) AS m "
            "WHERE m.conv_id = 9 AND m.seq = 3");
  EXPECT_EQ(routedSql(*map, "SELECT msg.seq FROM im.msg WHERE msg.conv_id = 25"),
            "SELECT msg_09.seq FROM (SELECT * FROM im.`msg_09` UNION ALL SELECT * FROM im.`msg_archive_09`) AS `msg_09` "
            "WHERE msg_09.conv_id = 25");
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

}  // namespace
}  // namespace sp::routing
