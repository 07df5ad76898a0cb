// checkAccess(): the statement policy against a user's rights, and physical
// shard tables private to users without physical_tables (issue 14).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/access_check.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


const CompiledShardMap& accessTestMap() {
  static auto map = [] {
    auto m = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
    EXPECT_TRUE(m.has_value());
    return m ? *m : nullptr;
  }();
  return *map;
}

constexpr AccessRights kAppUser{};
constexpr AccessRights kDdlUser{false, true, false};
constexpr AccessRights kToolingUser{false, false, true};
constexpr AccessRights kDbaUser{true, false, false};

// "ok", "need <statement>", or "<errno> <name>" for the proxy's refusals.
std::string verdict(std::string_view sql, const AccessRights& rights, bool backslash_escapes = true) {
  auto denial = checkAccess(sql, rights, &accessTestMap(), backslash_escapes);
  if (!denial) return "ok";
  if (const auto* need = std::get_if<parser::PrivilegeNeed>(&*denial)) return "need " + need->statement;
  const auto& refusal = std::get<Refusal>(*denial);
  auto info = routeErrorInfo(refusal.code);
  return std::to_string(info.mysql_errno) + " " + std::string(info.name);
}

struct Case {
  const char* sql;
  const char* app;      // plain application user
  const char* ddl;      // allow_ddl
  const char* tooling;  // physical_tables
};

const Case kCases[] = {
    {"SELECT * FROM msg WHERE conv_id = 5", "ok", "ok", "ok"},
    {"INSERT INTO msg (conv_id, seq) VALUES (7, 1)", "ok", "ok", "ok"},
    {"INSERT INTO msg_05 (conv_id, seq) VALUES (7, 1)", "9116 private_table", "9116 private_table", "ok"},
    {"SELECT * FROM `MSG_05`", "9116 private_table", "9116 private_table", "ok"},
    {"SELECT * FROM im.msg_05 WHERE conv_id = 5", "9116 private_table", "9116 private_table", "ok"},
    {"SELECT msg_05.seq FROM msg_05", "9116 private_table", "9116 private_table", "ok"},
    {"PREPARE s FROM 'DELETE FROM msg_05'", "9116 private_table", "9116 private_table", "ok"},
    {"EXECUTE IMMEDIATE 'DELETE FROM msg_05'", "9116 private_table", "9116 private_table", "ok"},
    {"SELECT 'msg_05'", "ok", "ok", "ok"},
    {"INSERT INTO msg_05(conv_id) VALUES (7)", "9116 private_table", "9116 private_table", "ok"},
    {"SHUTDOWN", "need SHUTDOWN", "need SHUTDOWN", "need SHUTDOWN"},
    {"SET PASSWORD = PASSWORD('x')", "need SET PASSWORD", "need SET PASSWORD", "need SET PASSWORD"},
    {"CREATE TABLE t (a INT)", "need CREATE TABLE", "ok", "need CREATE TABLE"},
    {"CREATE TABLE t (a INT); SHUTDOWN", "need CREATE TABLE", "need SHUTDOWN", "need CREATE TABLE"},
    {"DROP DATABASE im", "need DROP DATABASE", "need DROP DATABASE", "need DROP DATABASE"},
    {"PREPARE s FROM @q", "9117 unchecked_dynamic_sql", "9117 unchecked_dynamic_sql", "9117 unchecked_dynamic_sql"},
    // The statement policy comes first: a physical DDL is refused for its DDL.
    {"DROP TABLE msg_05", "need DROP TABLE", "9116 private_table", "need DROP TABLE"},
};

TEST(AccessCheck, Table) {
  for (const auto& c : kCases) {
    EXPECT_EQ(verdict(c.sql, kAppUser), c.app) << c.sql;
    EXPECT_EQ(verdict(c.sql, kDdlUser), c.ddl) << c.sql;
    EXPECT_EQ(verdict(c.sql, kToolingUser), c.tooling) << c.sql;
    EXPECT_EQ(verdict(c.sql, kDbaUser), "ok") << c.sql;
  }
}

TEST(AccessCheck, NoBackslashEscapes) {
  const char* sql = "SELECT '\\'; INSERT INTO msg_05 (conv_id) VALUES (7); -- '";
  EXPECT_EQ(verdict(sql, kAppUser, true), "ok");
  EXPECT_EQ(verdict(sql, kAppUser, false), "9116 private_table");
}

TEST(AccessCheck, WithoutAShardMapThereAreNoPhysicalTables) {
  EXPECT_FALSE(checkAccess("SELECT * FROM msg_05", kAppUser, nullptr));
  EXPECT_TRUE(checkAccess("SHUTDOWN", kAppUser, nullptr));
}

TEST(AccessCheck, RefusalNamesTheLogicalTable) {
  auto denial = checkAccess("INSERT INTO msg_05 (conv_id) VALUES (7)", kAppUser, &accessTestMap());
  ASSERT_TRUE(denial);
  const auto& refusal = std::get<Refusal>(*denial);
  EXPECT_NE(refusal.message.find("msg_05 is a physical shard table of msg"), std::string::npos) << refusal.message;
}

}  // namespace
}  // namespace sp::routing
