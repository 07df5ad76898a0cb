// The logical catalog (routing/catalog.hpp), the allow lists
// (routing/allow_list.hpp) and the schema-drift comparison
// (routing/schema_drift.hpp), on the golden shard map (db0 default).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/allow_list.hpp"
#include "routing/catalog.hpp"
#include "routing/merge/merge_metadata.hpp"
#include "routing/schema_drift.hpp"

namespace sp::routing {
namespace {

const CompiledShardMap& catalogTestMap() {
  static auto map = [] {
    auto m = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml",
                          std::vector<std::string>{"db0", "db1"});
    EXPECT_TRUE(m.has_value());
    return m ? *m : nullptr;
  }();
  return *map;
}

std::string planText(std::string_view sql) {
  auto plan = planCatalog(sql, catalogTestMap(), "db0");
  if (!plan) return "-";
  std::string out;
  for (const auto& p : plan->parts) out += (out.empty() ? "" : " | ") + p.backend + ": " + p.sql;
  return out;
}

TEST(Catalog, StatementsOfOneTable) {
  EXPECT_EQ(planText("SHOW CREATE TABLE msg"), "db0: SHOW CREATE TABLE `msg_00`");
  EXPECT_EQ(planText("show create table im.`msg`"), "db0: show create table im.`msg_00`");
  EXPECT_EQ(planText("DESCRIBE msg"), "db0: DESCRIBE `msg_00`");
  EXPECT_EQ(planText("DESC msg conv_id"), "db0: DESC `msg_00` conv_id");
  EXPECT_EQ(planText("EXPLAIN user_read_cursor"), "db0: EXPLAIN `user_read_cursor_00`");
  EXPECT_EQ(planText("SHOW FULL COLUMNS FROM msg FROM im"), "db0: SHOW FULL COLUMNS FROM `msg_00` FROM im");
  EXPECT_EQ(planText("SHOW INDEX FROM tg_channel_message"), "db0: SHOW INDEX FROM `tg_channel_message_s00`");
  // Not the catalog: unsharded or physical tables, EXPLAIN of a statement, several statements.
  EXPECT_EQ(planText("SHOW CREATE TABLE users"), "-");
  EXPECT_EQ(planText("DESCRIBE msg_05"), "-");
  EXPECT_EQ(planText("EXPLAIN SELECT * FROM msg WHERE conv_id = 1"), "-");
  EXPECT_EQ(planText("SHOW CREATE TABLE msg; SELECT 1"), "-");
  EXPECT_EQ(planText("SELECT * FROM msg WHERE conv_id = 1"), "-");
}

TEST(Catalog, ListingsRunOnTheDefaultBackendWithLiteralsPointedAtPhysicalTables) {
  EXPECT_EQ(planText("SHOW TABLES"), "db0: SHOW TABLES");
  EXPECT_EQ(planText("SHOW FULL TABLES LIKE 'msg'"), "db0: SHOW FULL TABLES LIKE 'msg_00'");
  EXPECT_EQ(planText("SHOW TABLE STATUS LIKE \"tg_channel_message\""),
            "db0: SHOW TABLE STATUS LIKE 'tg_channel_message_s00'");
  EXPECT_EQ(planText("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ('msg', 'users')"),
            "db0: SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ('msg_00', 'users')");
  EXPECT_EQ(planText("select * from INFORMATION_SCHEMA.`columns` where table_schema = database()"),
            "db0: select * from INFORMATION_SCHEMA.`columns` where table_schema = database()");
  EXPECT_EQ(planText("SELECT * FROM information_schema.PROCESSLIST"), "-");
  // The server's spellings of the catalog tables: U+0130 for I, the Kelvin sign for K.
  EXPECT_EQ(planText("SELECT TABLE_NAME FROM information_schema.STAT\xC4\xB0ST\xC4\xB0" "CS WHERE TABLE_NAME = 'msg'"),
            "db0: SELECT TABLE_NAME FROM information_schema.STAT\xC4\xB0ST\xC4\xB0" "CS WHERE TABLE_NAME = 'msg_00'");
  EXPECT_EQ(planText("SELECT TABLE_NAME FROM information_schema.\xE2\x84\xAA" "EY_COLUMN_USAGE WHERE TABLE_NAME = 'msg'"),
            "db0: SELECT TABLE_NAME FROM information_schema.\xE2\x84\xAA" "EY_COLUMN_USAGE WHERE TABLE_NAME = 'msg_00'");
  EXPECT_EQ(planText("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'msg_05'"),
            "db0: SELECT COUNT(*) FROM information_schema.tables WHERE table_name = ''");
}

TEST(Catalog, InformationSchemaAsTheDefaultDatabase) {
  // USE information_schema; SELECT ... FROM TABLES: the same catalog, without the word in the text.
  auto in_is = [](std::string_view sql, std::string_view db) {
    auto plan = planCatalog(sql, catalogTestMap(), "db0", {}, db);
    return plan ? plan->parts.front().sql : std::string("-");
  };
  EXPECT_EQ(in_is("SELECT TABLE_NAME FROM TABLES WHERE TABLE_NAME = 'msg'", "information_schema"),
            "SELECT TABLE_NAME FROM TABLES WHERE TABLE_NAME = 'msg_00'");
  EXPECT_EQ(in_is("select * from `statistics`", "INFORMATION_SCHEMA"), "select * from `statistics`");
  EXPECT_EQ(in_is("SELECT * FROM t JOIN COLUMNS c USING (x)", "information_schema"),
            "SELECT * FROM t JOIN COLUMNS c USING (x)");
  // Another database, or a name qualified by another schema: not the catalog.
  EXPECT_EQ(in_is("SELECT TABLE_NAME FROM TABLES", "im"), "-");
  EXPECT_EQ(in_is("SELECT * FROM im.TABLES", "information_schema"), "-");
  EXPECT_EQ(in_is("SELECT * FROM ENGINES", "information_schema"), "-");
  EXPECT_TRUE(isInformationSchemaDatabase("information_schema"));
  EXPECT_TRUE(isInformationSchemaDatabase("Information_Schema"));
  EXPECT_FALSE(isInformationSchemaDatabase("im"));
  EXPECT_FALSE(isInformationSchemaDatabase(""));
}

TEST(Catalog, ALogicalTableWithoutAShardOnTheDefaultBackendAddsAPart) {
  auto plan = planCatalog("SHOW TABLES LIKE 'msg'", catalogTestMap(), "db1");
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->parts.size(), 1u);  // every table of the golden map has shards on db1 too
  EXPECT_EQ(plan->parts[0].sql, "SHOW TABLES LIKE 'msg_08'");
  EXPECT_TRUE(plan->parts[0].primary);
}

protocol::ColumnDefinition41 column(std::string name, std::string org_name = {}) {
  protocol::ColumnDefinition41 c;
  c.name = std::move(name);
  c.org_name = std::move(org_name);
  return c;
}

using Row = std::vector<std::optional<std::string>>;

std::vector<Row> filtered(CatalogRowFilter& filter, std::vector<Row> rows, bool primary = true) {
  std::vector<Row> out;
  for (auto& r : rows) {
    if (filter.accept(r, primary)) out.push_back(r);
  }
  return out;
}

TEST(Catalog, RowsShowEachLogicalTableFromOnePhysicalTable) {
  CatalogRowFilter filter(catalogTestMap(), {}, "im");
  filter.setColumns({column("Tables_in_im", "TABLE_NAME"), column("Table_type")});
  EXPECT_EQ(filtered(filter, {{"msg_00", "BASE TABLE"}, {"msg_01", "BASE TABLE"}, {"users", "BASE TABLE"},
                              {"msg", "BASE TABLE"}, {"tg_channel_message_s01", "BASE TABLE"}}),
            (std::vector<Row>{{"msg", "BASE TABLE"}, {"users", "BASE TABLE"}, {"tg_channel_message", "BASE TABLE"}}));
  // Another backend's part: only logical tables not shown yet.
  EXPECT_EQ(filtered(filter, {{"msg_08", "BASE TABLE"}, {"users", "BASE TABLE"}, {"msg_event_2", "BASE TABLE"}},
                     false),
            (std::vector<Row>{{"msg_event", "BASE TABLE"}}));
}

TEST(Catalog, ShowLikeAppliesToTheLogicalName) {
  auto plan = planCatalog("SHOW TABLES LIKE 'msg\\_0%'", catalogTestMap(), "db0");
  ASSERT_TRUE(plan);
  ASSERT_TRUE(plan->like);
  EXPECT_EQ(*plan->like, "msg\\_0%");
  CatalogRowFilter filter(catalogTestMap(), {}, "im", plan->like);
  filter.setColumns({column("Tables_in_im (msg\\_0%)", "TABLE_NAME")});
  EXPECT_EQ(filtered(filter, {{"msg_00"}, {"msg_01"}}), std::vector<Row>{});
  EXPECT_TRUE(likeMatches("m_g", "MSG"));
  EXPECT_TRUE(likeMatches("%cursor", "user_read_cursor"));
  EXPECT_FALSE(likeMatches("msg\\_%", "msgx1"));
  EXPECT_TRUE(likeMatches("msg\\_%", "msg_1"));
}

TEST(Catalog, AliasedInformationSchemaColumnsAndDdl) {
  CatalogRowFilter filter(catalogTestMap(), {}, "im");
  filter.setColumns({column("t", "TABLE_NAME"), column("c", "COLUMN_NAME"), column("r", "REFERENCED_TABLE_NAME")});
  EXPECT_EQ(filtered(filter, {{"msg_03", "seq", "user_read_cursor_03"}, {"msg_04", "seq", std::nullopt},
                              {"msg_03", "conv_id", std::nullopt}}),
            (std::vector<Row>{{"msg", "seq", "user_read_cursor"}, {"msg", "conv_id", std::nullopt}}));
  CatalogRowFilter ddl(catalogTestMap(), {}, "im");
  ddl.setColumns({column("Table"), column("Create Table")});
  EXPECT_EQ(filtered(ddl, {{"msg_00", "CREATE TABLE `msg_00` (\n  `id` bigint NOT NULL AUTO_INCREMENT\n) "
                                      "ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4"}}),
            (std::vector<Row>{{"msg", "CREATE TABLE `msg` (\n  `id` bigint NOT NULL AUTO_INCREMENT\n) "
                                      "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"}}));
}

TEST(Catalog, AllowListsFilterRows) {
  const std::vector<std::string> tables = {"msg", "it_*"};
  CatalogRowFilter filter(catalogTestMap(), AllowLists{nullptr, &tables}, "im");
  filter.setColumns({column("TABLE_SCHEMA", "TABLE_SCHEMA"), column("TABLE_NAME", "TABLE_NAME")});
  EXPECT_EQ(filtered(filter, {{"im", "msg_00"}, {"im", "users"}, {"im", "it_x"}, {"im", "user_read_cursor_00"}}),
            (std::vector<Row>{{"im", "msg"}, {"im", "it_x"}}));
}

std::string allowVerdict(std::string_view sql, const AllowLists& lists, std::string_view db = "im") {
  auto d = checkAllowLists(sql, lists, db, &catalogTestMap());
  if (!d) return "ok";
  if (d->schema) return "1044 " + d->database;
  return "1142 " + d->command + " " + d->database + "." + d->table;
}

TEST(AllowList, Globs) {
  EXPECT_TRUE(globMatches("msg", "MSG"));
  EXPECT_TRUE(globMatches("it_*", "it_allow_x"));
  EXPECT_TRUE(globMatches("*", ""));
  EXPECT_TRUE(globMatches("a*b*c", "axxbyyc"));
  EXPECT_FALSE(globMatches("a*b*c", "axxbyy"));
  EXPECT_FALSE(globMatches("msg", "msg_00"));
}

TEST(AllowList, TablesAndSchemas) {
  const std::vector<std::string> schemas = {"im", "app_*"};
  const std::vector<std::string> tables = {"msg", "im.tg_channel_message", "it_*", "app_1.*"};
  const AllowLists lists{&schemas, &tables};
  EXPECT_EQ(allowVerdict("SELECT * FROM msg WHERE conv_id = 1", lists), "ok");
  EXPECT_EQ(allowVerdict("SELECT * FROM im.tg_channel_message", lists), "ok");
  EXPECT_EQ(allowVerdict("SELECT * FROM app_1.anything", lists), "ok");
  EXPECT_EQ(allowVerdict("SELECT * FROM app_2.tg_channel_message", lists), "1142 SELECT app_2.tg_channel_message");
  EXPECT_EQ(allowVerdict("SELECT * FROM information_schema.TABLES", lists), "ok");
  EXPECT_EQ(allowVerdict("SELECT * FROM users", lists), "1142 SELECT im.users");
  EXPECT_EQ(allowVerdict("INSERT INTO users (a) VALUES (1)", lists), "1142 INSERT im.users");
  EXPECT_EQ(allowVerdict("INSERT users (a) VALUES (1)", lists), "1142 INSERT im.users");
  EXPECT_EQ(allowVerdict("REPLACE LOW_PRIORITY users VALUES (1)", lists), "1142 INSERT im.users");
  EXPECT_EQ(allowVerdict("UPDATE users SET a = 1", lists), "1142 UPDATE im.users");
  EXPECT_EQ(allowVerdict("DELETE FROM users", lists), "1142 DELETE im.users");
  EXPECT_EQ(allowVerdict("INSERT INTO msg SELECT * FROM users", lists), "1142 SELECT im.users");
  EXPECT_EQ(allowVerdict("DROP TABLE it_a, users", lists), "1142 DROP im.users");
  EXPECT_EQ(allowVerdict("SELECT * FROM msg_05", lists), "ok");  // a physical table counts as its logical table
  EXPECT_EQ(allowVerdict("SELECT * FROM user_read_cursor_05", lists), "1142 SELECT im.user_read_cursor_05");
  EXPECT_EQ(allowVerdict("WITH users AS (SELECT 1) SELECT * FROM users", lists), "ok");
  EXPECT_EQ(allowVerdict("WITH x AS (SELECT 1), y (a) AS (SELECT 2) SELECT * FROM x, y", lists), "ok");
  EXPECT_EQ(allowVerdict("SELECT * FROM mysql.user", lists), "1142 SELECT mysql.user");
  EXPECT_EQ(allowVerdict("SHOW CREATE TABLE users", lists), "1142 SHOW im.users");
  EXPECT_EQ(allowVerdict("SHOW INDEX FROM users", lists), "1142 SELECT im.users");
  EXPECT_EQ(allowVerdict("USE mysql", lists), "1044 mysql");
  EXPECT_EQ(allowVerdict("SHOW TABLES FROM mysql", lists), "1044 mysql");
  EXPECT_EQ(allowVerdict("SHOW COLUMNS FROM msg FROM mysql", lists), "1044 mysql");
  EXPECT_EQ(allowVerdict("SHOW CREATE DATABASE mysql", lists), "1044 mysql");
  EXPECT_EQ(allowVerdict("SELECT * FROM msg", lists, "other"), "1142 SELECT other.msg");
  EXPECT_EQ(allowVerdict("SELECT 'users', users FROM msg", lists), "ok");  // a string, a column
  EXPECT_EQ(allowVerdict("SELECT * FROM users", AllowLists{}), "ok");
}

TEST(SchemaDrift, ShapesAndDifferences) {
  const TextRows columns = {{"msg_00", "id", "bigint(20)", "NO", std::nullopt, "auto_increment", std::nullopt},
                            {"msg_00", "body", "text", "YES", "NULL", "", "utf8mb4_general_ci"},
                            {"msg_01", "id", "bigint(20)", "NO", std::nullopt, "auto_increment", std::nullopt},
                            {"msg_01", "body", "mediumtext", "YES", "NULL", "", "utf8mb4_general_ci"},
                            {"msg_01", "extra", "int(11)", "YES", "NULL", "", std::nullopt}};
  const TextRows indexes = {{"msg_00", "PRIMARY", "0", "1", "id", std::nullopt},
                            {"msg_00", "k", "1", "1", "body", "10"},
                            {"msg_00", "k", "1", "2", "id", std::nullopt},
                            {"msg_01", "PRIMARY", "0", "1", "id", std::nullopt}};
  auto shapes = shapesFromRows(columns, indexes);
  EXPECT_EQ(shapes["msg_00"].indexes["k"], "(body(10),id)");
  EXPECT_EQ(shapes["msg_00"].indexes["PRIMARY"], "UNIQUE (id)");
  std::map<std::string, BackendShapes> by_backend{{"db0", shapes}};
  auto rows = findSchemaDrift(catalogTestMap(), by_backend, {{"db1", "connection refused"}});
  std::vector<std::string> msg01;
  size_t missing = 0, unreadable = 0;
  for (const auto& r : rows) {
    if (r.physical_table == "msg_01") msg01.push_back(r.difference);
    if (r.difference == "missing") ++missing;
    if (r.difference.starts_with("not checked: connection refused")) ++unreadable;
    EXPECT_TRUE(r.table != "msg" || r.reference == "db0.msg_00") << r.reference;
  }
  EXPECT_EQ(msg01, (std::vector<std::string>{
                       "column body: mediumtext NULL DEFAULT NULL COLLATE utf8mb4_general_ci (reference: text NULL "
                       "DEFAULT NULL COLLATE utf8mb4_general_ci)",
                       "extra column extra int(11) NULL DEFAULT NULL", "index k missing"}));
  EXPECT_GT(missing, 0u);     // msg_02 .. msg_07 are not in the rows
  EXPECT_GT(unreadable, 0u);  // every shard on db1
}

TEST(SchemaDrift, ScatterColumnsThatDifferAreNamed) {
  protocol::ColumnDefinition41 a, b;
  a.name = "status";
  a.type = protocol::ColumnType::kLong;
  b = a;
  EXPECT_FALSE(shardColumnMismatch(0, a, b));
  b.type = protocol::ColumnType::kLongLong;
  EXPECT_TRUE(shardColumnMismatch(0, a, b));
  b = a;
  b.name = "state";
  auto why = shardColumnMismatch(2, a, b);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("column 3 is `state`"), std::string::npos) << *why;
  // Strings are one family: a materialized result sends BLOB for TEXT.
  a.type = protocol::ColumnType::kVarString;
  b = a;
  b.type = protocol::ColumnType::kBlob;
  EXPECT_FALSE(shardColumnMismatch(0, a, b));
}

}  // namespace
}  // namespace sp::routing
