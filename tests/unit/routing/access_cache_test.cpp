// AccessVerdictCache: the same verdicts as checkAccess(), and a remembered
// "may run" never reused when anything the verdict depends on changed (the
// user's rights, the shard map, NO_BACKSLASH_ESCAPES, a literal that is read
// as SQL).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser/lexer.hpp"
#include "routing/access_cache.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


std::shared_ptr<const CompiledShardMap> mapOf(std::string_view yaml) {
  auto m = compileShardMap(yaml, kBackends);
  EXPECT_TRUE(m.has_value());
  return m ? *m : nullptr;
}

// msg in 16 shards msg_00..msg_15; the other map has 2 shards, msg_0 and msg_1.
const auto kMap = mapOf("version: 1\ntables:\n  msg: {key: conv_id, method: mod, shards: 16, table: \"msg_{shard:02}\", "
                        "backends: {db0: \"0-7\", db1: \"8-15\"}}\n");
const auto kOtherMap = mapOf("version: 1\ntables:\n  msg: {key: conv_id, method: mod, shards: 2, table: \"msg_{shard}\", "
                             "backends: {db0: \"0\", db1: \"1\"}}\n");

constexpr AccessRights kApp{};
constexpr AccessRights kDdl{false, true, false};
constexpr AccessRights kTooling{false, false, true};
constexpr AccessRights kDba{true, false, false};

std::string describe(const std::optional<AccessDenial>& denial) {
  if (!denial) return "ok";
  if (const auto* need = std::get_if<parser::PrivilegeNeed>(&*denial)) return "need " + need->statement;
  const auto& refusal = std::get<Refusal>(*denial);
  return std::to_string(routeErrorInfo(refusal.code).mysql_errno) + " " + refusal.message;
}

// The cache's verdict, with the statement's tokens as the session has them.
std::string cached(AccessVerdictCache& cache, std::string_view sql, const AccessRights& rights,
                   const CompiledShardMap* map, bool backslash_escapes = true) {
  const auto tokens = parser::tokenize(sql);
  return describe(cache.check(sql, rights, map, backslash_escapes, tokens));
}

std::string direct(std::string_view sql, const AccessRights& rights, const CompiledShardMap* map,
                   bool backslash_escapes = true) {
  return describe(checkAccess(sql, rights, map, backslash_escapes));
}

const char* const kCorpus[] = {
    "SELECT c FROM sbtest1 WHERE id = 5",
    "SELECT c FROM sbtest1 WHERE id = 6",
    "SELECT * FROM msg WHERE conv_id = 5",
    "SELECT * FROM msg_05 WHERE conv_id = 5",
    "SELECT * FROM `MSG_05`",
    "SELECT * FROM msg_1",
    "SELECT 'msg_05'",
    "SELECT TRIM(LEADING 'x' FROM 'abc')",
    "SELECT TRIM(LEADING 'x' FROM 'msg_05')",
    "SELECT immediate 'msg_05'",
    "INSERT INTO msg (conv_id, seq) VALUES (7, 1)",
    "INSERT INTO msg_05 (conv_id, seq) VALUES (7, 1)",
    "UPDATE msg SET content = 'x' WHERE conv_id = 1",
    "DELETE FROM msg WHERE conv_id = 1",
    "REPLACE INTO msg (conv_id) VALUES (1)",
    "WITH a AS (SELECT 1) SELECT * FROM a",
    "SELECT LOAD_FILE('/etc/passwd')",
    "SELECT 1 INTO OUTFILE '/tmp/x'",
    "SELECT 1; SHUTDOWN",
    "PREPARE s FROM 'SELECT 1'",
    "PREPARE s FROM 'DELETE FROM msg_05'",
    "EXECUTE IMMEDIATE 'SELECT 1'",
    "EXECUTE IMMEDIATE 'DELETE FROM msg_05'",
    "CREATE TABLE t (a INT)",
    "DROP TABLE msg_05",
    "SET GLOBAL x = 1",
    "SET @a = 1",
    "SHUTDOWN",
    "SELECT 'abc', 1",
    "SELECT '\\', msg_05 FROM t -- '",
    "SELECT 1 /*! , msg_05 */",
    "SELECT `unterminated",
};

// Every statement, every rights profile, both maps and none, both escape
// modes, twice through one cache (the second pass hits): always the verdict
// of checkAccess().
TEST(AccessVerdictCache, SameVerdictsAsCheckAccess) {
  AccessVerdictCache cache;
  const CompiledShardMap* maps[] = {kMap.get(), kOtherMap.get(), nullptr};
  for (int pass = 0; pass < 2; ++pass) {
    for (const CompiledShardMap* map : maps) {
      for (bool escapes : {true, false}) {
        for (const AccessRights& rights : {kApp, kDdl, kTooling, kDba}) {
          for (const char* sql : kCorpus) {
            EXPECT_EQ(cached(cache, sql, rights, map, escapes), direct(sql, rights, map, escapes))
                << sql << " pass " << pass << " escapes " << escapes;
          }
        }
      }
    }
  }
  EXPECT_GT(cache.hits(), 0u);
}

TEST(AccessVerdictCache, RepeatedShapeHits) {
  AccessVerdictCache cache;
  EXPECT_EQ(cached(cache, "SELECT c FROM sbtest1 WHERE id = 5", kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cached(cache, "select c from sbtest1 where id = 77", kApp, kMap.get()), "ok");  // other spelling
  EXPECT_EQ(cached(cache, "SELECT c FROM sbtest1 WHERE id = 99", kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(AccessVerdictCache, OtherRightsAreNotServedFromTheCache) {
  AccessVerdictCache cache;
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 1", kTooling, kMap.get()), "ok");
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 2", kTooling, kMap.get()), "ok");
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 3", kApp, kMap.get()).substr(0, 4), "9116");
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 3", kDdl, kMap.get()).substr(0, 4), "9116");
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(AccessVerdictCache, AnotherShardMapDropsTheVerdicts) {
  AccessVerdictCache cache;
  // msg_1 is a physical table of the other map only (msg_01 of the first).
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_1 WHERE id = 1", kApp, kMap.get()), "ok");
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_1 WHERE id = 1", kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_1 WHERE id = 1", kApp, kOtherMap.get()).substr(0, 4), "9116");
  EXPECT_EQ(cache.size(), 0u);
  // No map at all: no physical tables.
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 1", kApp, nullptr), "ok");
  EXPECT_EQ(cached(cache, "SELECT * FROM msg_05 WHERE id = 1", kApp, kMap.get()).substr(0, 4), "9116");
  // A map reloaded with the same content (a new object) keeps them.
  auto reloaded = mapOf(std::string(kMap->sourceText()));
  ASSERT_NE(reloaded.get(), kMap.get());
  EXPECT_EQ(cached(cache, "SELECT * FROM msg WHERE id = 1", kApp, kMap.get()), "ok");
  const uint64_t hits = cache.hits();
  EXPECT_EQ(cached(cache, "SELECT * FROM msg WHERE id = 2", kApp, reloaded.get()), "ok");
  EXPECT_EQ(cache.hits(), hits + 1);
}

TEST(AccessVerdictCache, LiteralsReadAsSqlAreNeverCached) {
  AccessVerdictCache cache;
  EXPECT_EQ(cached(cache, "SELECT TRIM(LEADING 'x' FROM 'abc')", kApp, kMap.get()), "ok");
  EXPECT_EQ(cached(cache, "SELECT TRIM(LEADING 'x' FROM 'msg_05')", kApp, kMap.get()).substr(0, 4), "9116");
  EXPECT_EQ(cached(cache, "PREPARE s FROM 'SELECT 1'", kApp, kMap.get()), "ok");
  EXPECT_EQ(cached(cache, "PREPARE s FROM 'SHUTDOWN'", kApp, kMap.get()), "need SHUTDOWN");
  EXPECT_EQ(cached(cache, "EXECUTE IMMEDIATE 'SELECT 1'", kApp, kMap.get()), "ok");
  EXPECT_EQ(cached(cache, "EXECUTE IMMEDIATE 'DELETE FROM msg_05'", kApp, kMap.get()).substr(0, 4), "9116");
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(AccessVerdictCache, NoBackslashEscapesIsPartOfTheVerdict) {
  AccessVerdictCache cache;
  // Same tokens under the lexer's escapes; under NO_BACKSLASH_ESCAPES the
  // second one's string ends at the backslash and names msg_05.
  EXPECT_EQ(cached(cache, "SELECT 'abc -- x'", kApp, kMap.get(), false), "ok");
  EXPECT_EQ(cached(cache, "SELECT '\\', msg_05 FROM t -- '", kApp, kMap.get(), false).substr(0, 4), "9116");
  EXPECT_EQ(cached(cache, "SELECT '\\', msg_05 FROM t -- '", kApp, kMap.get(), true), "ok");
  EXPECT_EQ(cached(cache, "SELECT '\\', msg_05 FROM t -- '", kApp, kMap.get(), false).substr(0, 4), "9116");
}

TEST(AccessVerdictCache, OnlyPlainSingleStatementsAreKept) {
  AccessVerdictCache cache;
  for (const char* sql : {"SELECT 1; SELECT 2", "SET @a = 1", "BEGIN", "SHOW TABLES", "CALL p()",
                          "SELECT `unterminated", "DO 1"}) {
    EXPECT_EQ(cached(cache, sql, kApp, kMap.get()), direct(sql, kApp, kMap.get())) << sql;
  }
  EXPECT_EQ(cache.size(), 0u);
  // Without the default-dialect tokens (another sql_mode dialect), nothing is kept.
  EXPECT_EQ(describe(cache.check("SELECT 1", kApp, kMap.get(), true, {})), "ok");
  EXPECT_EQ(cache.size(), 0u);
  // Refusals are never kept; privileged users are never looked up.
  EXPECT_EQ(cached(cache, "SELECT LOAD_FILE('x')", kApp, kMap.get()), "need LOAD_FILE()");
  EXPECT_EQ(cached(cache, "SELECT LOAD_FILE('x')", kDba, kMap.get()), "ok");
  EXPECT_EQ(cache.size(), 0u);
}

TEST(AccessVerdictCache, LongStatementsBypassIt) {
  AccessVerdictCache cache;
  std::string sql = "SELECT * FROM msg WHERE conv_id IN (1";
  while (sql.size() < 3 * AccessVerdictCache::kMaxKeyBytes) sql += ", 1";
  sql += ")";
  EXPECT_EQ(cached(cache, sql, kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.size(), 0u);
  // A short key, but a statement longer than kMaxStatementBytes with its literal.
  const std::string blob = "SELECT '" + std::string(AccessVerdictCache::kMaxStatementBytes, 'x') + "'";
  EXPECT_EQ(cached(cache, blob, kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cached(cache, "SELECT 'x'", kApp, kMap.get()), "ok");
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace sp::routing
