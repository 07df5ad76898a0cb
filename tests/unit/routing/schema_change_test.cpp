// DDL on logical tables (routing/schema_change.hpp): what is recognised,
// what is refused and why, and the statement each physical table gets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/schema_change.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {

std::shared_ptr<const CompiledShardMap> msgMap() {
  auto map = compileShardMap(
      "version: 1\n"
      "tables:\n"
      "  msg:\n"
      "    key: conv_id\n"
      "    method: mod\n"
      "    shards: 4\n"
      "    table: \"msg_{shard:02}\"\n"
      "    backends: {db0: \"0-1\", db1: \"2-3\"}\n"
      "    archive: {table: \"msg_archive_{shard:02}\"}\n",
      kBackends);
  EXPECT_TRUE(map.has_value()) << (map ? "" : formatShardMapIssues(map.error(), "map"));
  return map ? *map : nullptr;
}

LogicalDdl recognized(std::string_view sql) {
  auto map = msgMap();
  auto r = recognizeLogicalDdl(sql, *map);
  EXPECT_TRUE(r.has_value()) << sql;
  if (!r) return {};
  EXPECT_TRUE(r->has_value()) << sql << ": " << (r->has_value() ? "" : r->error());
  return r->has_value() ? **r : LogicalDdl{};
}

std::string refusal(std::string_view sql) {
  auto map = msgMap();
  auto r = recognizeLogicalDdl(sql, *map);
  EXPECT_TRUE(r.has_value() && !r->has_value()) << sql;
  return r && !r->has_value() ? r->error() : "";
}

TEST(SchemaChange, RecognisesEachForm) {
  EXPECT_EQ(recognized("ALTER TABLE msg ADD INDEX idx_x (sender_id)").kind, LogicalDdlKind::kAlterTable);
  EXPECT_EQ(recognized("alter online ignore table `im`.`Msg` add column x int;").kind, LogicalDdlKind::kAlterTable);
  EXPECT_EQ(recognized("CREATE UNIQUE INDEX u ON msg (conv_id, seq)").kind, LogicalDdlKind::kCreateIndex);
  EXPECT_EQ(recognized("DROP INDEX IF EXISTS u ON msg").kind, LogicalDdlKind::kDropIndex);
  EXPECT_EQ(recognized("CREATE TABLE IF NOT EXISTS msg (conv_id BIGINT, seq BIGINT)").kind,
            LogicalDdlKind::kCreateTable);
  EXPECT_EQ(recognized("TRUNCATE msg").kind, LogicalDdlKind::kTruncate);
  EXPECT_EQ(recognized("alter online ignore table `im`.`Msg` add column x int;").table, "msg");
}

TEST(SchemaChange, OtherStatementsAreNotItsBusiness) {
  auto map = msgMap();
  for (const char* sql : {"ALTER TABLE conv ADD INDEX i (a)", "CREATE INDEX i ON conv (a)", "SELECT * FROM msg",
                          "CREATE TEMPORARY TABLE msg (a INT)", "DROP TABLE conv", "CREATE TABLE t (msg TEXT)",
                          "ALTER TABLE msg_03 ADD INDEX i (a)"}) {
    EXPECT_FALSE(recognizeLogicalDdl(sql, *map).has_value()) << sql;
  }
}

TEST(SchemaChange, RefusesWhatWouldBreakTheMap) {
  EXPECT_NE(refusal("DROP TABLE msg").find("DROP TABLE"), std::string::npos);
  EXPECT_NE(refusal("RENAME TABLE msg TO msg2").find("RENAME TABLE"), std::string::npos);
  EXPECT_NE(refusal("ALTER TABLE msg RENAME TO m").find("RENAME"), std::string::npos);
  EXPECT_NE(refusal("ALTER TABLE msg DROP PARTITION p1").find("partition"), std::string::npos);
  EXPECT_NE(refusal("ALTER TABLE msg ADD FOREIGN KEY (conv_id) REFERENCES conv (conv_id)").find("foreign key"),
            std::string::npos);
  EXPECT_NE(refusal("CREATE TABLE msg LIKE msg_00").find("LIKE"), std::string::npos);
}

TEST(SchemaChange, AlgorithmClauses) {
  auto add = recognized("ALTER TABLE msg ADD INDEX idx_x (sender_id);");
  EXPECT_FALSE(add.algorithm_given);
  ASSERT_EQ(algorithmsToTry(add).size(), 2u);
  EXPECT_EQ(physicalStatement(add, "msg_02", DdlAlgorithm::kInstant),
            "ALTER TABLE `msg_02` ADD INDEX idx_x (sender_id), ALGORITHM=INSTANT");
  EXPECT_EQ(physicalStatement(add, "msg_02", DdlAlgorithm::kInplaceNoLock),
            "ALTER TABLE `msg_02` ADD INDEX idx_x (sender_id), ALGORITHM=INPLACE, LOCK=NONE");
  auto index = recognized("CREATE INDEX i ON im.msg (a)");
  EXPECT_EQ(physicalStatement(index, "msg_01", DdlAlgorithm::kInplaceNoLock),
            "CREATE INDEX i ON `msg_01` (a) ALGORITHM=INPLACE LOCK=NONE");
  // MariaDB's DROP INDEX takes no ALGORITHM: it runs as ALTER TABLE.
  auto drop = recognized("DROP INDEX IF EXISTS `u` ON msg");
  EXPECT_EQ(physicalStatement(drop, "msg_03", DdlAlgorithm::kInstant),
            "ALTER TABLE `msg_03` DROP INDEX IF EXISTS `u`, ALGORITHM=INSTANT");
  auto copy = recognized("ALTER TABLE msg MODIFY body TEXT, ALGORITHM = COPY");
  EXPECT_TRUE(copy.algorithm_given);
  EXPECT_TRUE(copy.copy);
  EXPECT_EQ(algorithmsToTry(copy), std::vector<DdlAlgorithm>{DdlAlgorithm::kAsWritten});
  EXPECT_EQ(physicalStatement(copy, "msg_00", DdlAlgorithm::kAsWritten),
            "ALTER TABLE `msg_00` MODIFY body TEXT, ALGORITHM = COPY");
}

TEST(SchemaChange, TargetsEveryShardAndItsArchive) {
  auto map = msgMap();
  auto targets = physicalTargets(recognized("ALTER TABLE msg ADD COLUMN x INT"), *map->findTable("msg"));
  ASSERT_EQ(targets.size(), 8u);
  EXPECT_EQ(targets[0].table, "msg_00");
  EXPECT_EQ(targets[0].backend, "db0");
  EXPECT_EQ(targets[3].backend, "db1");
  EXPECT_EQ(targets[4].table, "msg_archive_00");
  EXPECT_EQ(targets[4].role, "archive");
  // A new table's shards only (archives are made by ARCHIVE).
  EXPECT_EQ(physicalTargets(recognized("CREATE TABLE msg (a INT)"), *map->findTable("msg")).size(), 4u);
}

}  // namespace
}  // namespace sp::routing
