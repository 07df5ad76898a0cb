// The admin port's schema-change commands (proxy/schema/schema_command.hpp)
// and the SQLite record of changes (schema_store.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "proxy/schema/schema_command.hpp"
#include "proxy/schema/schema_store.hpp"

namespace sp::proxy {
namespace {

TEST(SchemaCommand, ParsesEachForm) {
  auto show = parseSchemaCommand("show schema changes;");
  ASSERT_TRUE(show && *show);
  EXPECT_EQ((*show)->kind, SchemaCommand::Kind::kShow);
  auto one = parseSchemaCommand("SHOW SCHEMA CHANGE 12");
  ASSERT_TRUE(one && *one);
  EXPECT_EQ((*one)->kind, SchemaCommand::Kind::kShowOne);
  EXPECT_EQ((*one)->id, 12);
  auto retry = parseSchemaCommand("RETRY  SCHEMA CHANGE 3 ;");
  ASSERT_TRUE(retry && *retry);
  EXPECT_EQ((*retry)->kind, SchemaCommand::Kind::kRetry);
  EXPECT_EQ((*retry)->id, 3);
  auto ddl = parseSchemaCommand("ALTER TABLE msg ADD INDEX i (a)");
  ASSERT_TRUE(ddl && *ddl);
  EXPECT_EQ((*ddl)->kind, SchemaCommand::Kind::kDdl);
}

TEST(SchemaCommand, NamesAnotherProxyOfTheFleet) {
  auto retry = parseSchemaCommand("retry schema change 7 from proxy p2");
  ASSERT_TRUE(retry && *retry);
  EXPECT_EQ((*retry)->kind, SchemaCommand::Kind::kRetry);
  EXPECT_EQ((*retry)->id, 7);
  EXPECT_EQ((*retry)->proxy, "p2");
  auto quoted = parseSchemaCommand("SHOW SCHEMA CHANGE 3 FROM PROXY 'proxy-2';");
  ASSERT_TRUE(quoted && *quoted);
  EXPECT_EQ((*quoted)->kind, SchemaCommand::Kind::kShowOne);
  EXPECT_EQ((*quoted)->proxy, "proxy-2");
  auto backticked = parseSchemaCommand("SHOW SCHEMA CHANGE 3 FROM PROXY `b.1`");
  ASSERT_TRUE(backticked && *backticked);
  EXPECT_EQ((*backticked)->proxy, "b.1");
  auto own = parseSchemaCommand("RETRY SCHEMA CHANGE 3");
  ASSERT_TRUE(own && *own);
  EXPECT_EQ((*own)->proxy, "");
}

TEST(SchemaCommand, MalformedOnesSayTheForm) {
  for (const char* sql : {"RETRY SCHEMA CHANGE", "RETRY SCHEMA CHANGE x", "SHOW SCHEMA CHANGE 0", "SHOW SCHEMA CHANGES 4",
                          "RETRY SCHEMA CHANGE 3 FROM p2", "RETRY SCHEMA CHANGE 3 FROM PROXY", "SHOW SCHEMA CHANGE 3 FROM PROXY ''",
                          "RETRY SCHEMA CHANGE 3 FROM PROXY p2 p3", "SHOW SCHEMA CHANGE 3 FROM PROXY 7"}) {
    auto r = parseSchemaCommand(sql);
    ASSERT_TRUE(r.has_value()) << sql;
    ASSERT_FALSE(r->has_value()) << sql;
    EXPECT_NE(r->error().find("usage:"), std::string::npos) << sql;
  }
}

TEST(SchemaCommand, OtherCommandsAreNotItsOwn) {
  for (const char* sql : {"SHOW SCHEMA DRIFT", "SHOW MOVES", "CREATE DATABASE x", "HELP", "SELECT 1"}) {
    EXPECT_FALSE(parseSchemaCommand(sql).has_value()) << sql;
  }
}

TEST(SchemaStore, KeepsAChangeAndItsTablesAcrossOpens) {
  const auto path = std::filesystem::temp_directory_path() / ("sp_schema_store_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  int64_t id = 0;
  {
    auto store = SchemaStore::open(path.string());
    ASSERT_TRUE(store.has_value()) << store.error();
    SchemaChangeRecord r;
    r.table = "msg";
    r.kind = "ALTER TABLE";
    r.statement = "ALTER TABLE msg ADD INDEX i (a)";
    r.shapes_before = "shard\x1f" "column a int\n\x1e";
    r.tables = {{"db0", "msg_00", "shard", TableChangeState::kDone, "INSTANT", 0.25, ""},
                {"db1", "msg_01", "shard", TableChangeState::kFailed, "", 0, "error 1062: Duplicate entry"}};
    ASSERT_TRUE((*store)->save(r).has_value());
    id = r.id;
    EXPECT_GT(id, 0);
    r.state = SchemaChangeState::kFailed;
    ASSERT_TRUE((*store)->save(r).has_value());  // an update, not a second change
  }
  auto store = SchemaStore::open(path.string());
  ASSERT_TRUE(store.has_value());
  auto all = (*store)->list();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 1u);
  const auto& r = all->front();
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.state, SchemaChangeState::kFailed);
  EXPECT_EQ(r.shapes_before, "shard\x1f" "column a int\n\x1e");
  ASSERT_EQ(r.tables.size(), 2u);
  EXPECT_EQ(r.tables[0].algorithm, "INSTANT");
  EXPECT_DOUBLE_EQ(r.tables[0].seconds, 0.25);
  EXPECT_EQ(r.tables[1].state, TableChangeState::kFailed);
  EXPECT_EQ(r.tables[1].error, "error 1062: Duplicate entry");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sp::proxy
