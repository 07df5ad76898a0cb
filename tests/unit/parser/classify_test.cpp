#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser/classify.hpp"

namespace sp::parser {
namespace {

using K = StatementKind;
using S = SessionSetting::Kind;

// Pin flags as a compact string: T=temporary table, L=named lock,
// U=user variable, F=found rows, M=multiple statements.
std::string flags(const StatementInfo& info) {
  std::string out;
  if (info.creates_temporary_table) out += 'T';
  if (info.uses_named_lock) out += 'L';
  if (info.uses_user_variable) out += 'U';
  if (info.uses_found_rows) out += 'F';
  if (info.multiple_statements) out += 'M';
  return out;
}

struct ClassifyCase {
  const char* sql;
  K kind;
  const char* flags = "";
  const char* database = "";
};

class ClassifyTable : public ::testing::TestWithParam<ClassifyCase> {};

TEST_P(ClassifyTable, KindAndFlags) {
  const ClassifyCase& c = GetParam();
  StatementInfo info = classify(c.sql);
  EXPECT_EQ(info.kind, c.kind) << c.sql;
  EXPECT_EQ(flags(info), c.flags) << c.sql;
  EXPECT_EQ(info.database, c.database) << c.sql;
  if (info.kind != K::kSet) {
    EXPECT_TRUE(info.settings.empty()) << c.sql;
  }
}

const ClassifyCase kCases[] = {
    {"", K::kEmpty},
    {"   ", K::kEmpty},
    {"/* only a comment */ -- and another", K::kEmpty},
    {";", K::kEmpty},
    {"SELECT 1", K::kSelect},
    {"select * from t where id = 1", K::kSelect},
    {"  /* leading */ SeLeCt 1", K::kSelect},
    {"-- c\nSELECT 1", K::kSelect},
    {"# c\nSELECT 1", K::kSelect},
    {"/*!40001 SELECT 1 */", K::kSelect},
    {"/*+ hint */ SELECT 1", K::kSelect},
    {"(SELECT 1) UNION (SELECT 2)", K::kSelect},
    {"WITH c AS (SELECT 1) SELECT * FROM c", K::kSelect},
    {"WITH c AS (SELECT 1) UPDATE t JOIN c SET t.a = 1", K::kUpdate},
    {"TABLE t", K::kSelect},
    {"SELECT 1;", K::kSelect},
    {"SELECT 1 ; ; ", K::kSelect},
    {"SELECT 1; SELECT 2", K::kSelect, "M"},
    {"SELECT ';' , \"a;b\"", K::kSelect},
    {"INSERT INTO t VALUES (1)", K::kInsert},
    {"insert ignore into t set a=1", K::kInsert},
    {"REPLACE INTO t VALUES (1)", K::kReplace},
    {"UPDATE t SET a = 1", K::kUpdate},
    {"DELETE FROM t", K::kDelete},
    {"USE db1", K::kUse, "", "db1"},
    {"use `my``db`;", K::kUse, "", "my`db"},
    {"USE", K::kOther},
    {"BEGIN", K::kBegin},
    {"begin work", K::kBegin},
    // One compound statement for the server (tests/integration/dialect_server.py).
    {"BEGIN NOT ATOMIC SELECT 1; END", K::kOther},
    {"BEGIN NOT ATOMIC SELECT 1; END; DELETE FROM msg", K::kOther, "M"},
    {"START TRANSACTION", K::kBegin},
    {"START TRANSACTION READ ONLY", K::kBegin},
    {"start transaction with consistent snapshot", K::kBegin},
    {"START SLAVE", K::kOther},
    {"COMMIT", K::kCommit},
    {"COMMIT WORK AND NO CHAIN", K::kCommit},
    {"ROLLBACK", K::kRollback},
    {"rollback work", K::kRollback},
    {"ROLLBACK TO SAVEPOINT sp1", K::kSavepoint},
    {"ROLLBACK WORK TO sp1", K::kSavepoint},
    {"SAVEPOINT sp1", K::kSavepoint},
    {"RELEASE SAVEPOINT sp1", K::kSavepoint},
    {"XA START 'x'", K::kBegin},
    {"xa begin 'x', 'b', 1", K::kBegin},
    {"XA END 'x'", K::kXa},
    {"XA PREPARE 'x'", K::kXa},
    {"XA COMMIT 'x' ONE PHASE", K::kXa},
    {"XA RECOVER", K::kXa},
    {"LOCK TABLES t READ", K::kLockTables},
    {"lock table t write, u read", K::kLockTables},
    {"FLUSH TABLES WITH READ LOCK", K::kLockTables},
    {"FLUSH TABLES t1, t2 WITH READ LOCK", K::kLockTables},
    {"FLUSH PRIVILEGES", K::kOther},
    {"LOCK INSTANCE FOR BACKUP", K::kOther},
    {"UNLOCK TABLES", K::kUnlockTables},
    {"SHOW TABLES", K::kShow},
    {"show full processlist", K::kShow},
    {"EXPLAIN SELECT 1", K::kExplain},
    {"DESCRIBE t", K::kExplain},
    {"desc t", K::kExplain},
    {"CREATE TABLE t (a INT)", K::kDdl},
    {"CREATE TEMPORARY TABLE tmp (a INT)", K::kDdl, "T"},
    {"create temporary table if not exists tmp select 1", K::kDdl, "T"},
    {"CREATE OR REPLACE TEMPORARY TABLE tmp (a INT)", K::kDdl, "T"},
    {"ALTER TABLE t ADD c INT", K::kDdl},
    {"DROP TABLE t", K::kDdl},
    {"DROP TEMPORARY TABLE tmp", K::kDdl},
    {"TRUNCATE TABLE t", K::kDdl},
    {"RENAME TABLE a TO b", K::kDdl},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", K::kDdl},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END; DELETE FROM msg", K::kDdl, "M"},
    // A BEGIN later in the packet used to hide the statements after a CREATE.
    {"CREATE TABLE t (a INT); BEGIN; DELETE FROM msg WHERE conv_id = 1", K::kDdl, "M"},
    {"PREPARE s FROM 'SELECT ?'", K::kPrepareSql},
    {"PREPARE s FROM @sql", K::kPrepareSql, "U"},
    {"EXECUTE s USING @a, @b", K::kExecuteSql, "U"},
    {"DEALLOCATE PREPARE s", K::kDeallocateSql},
    {"DROP PREPARE s", K::kDeallocateSql},
    {"CALL p(1)", K::kCall},
    {"DO SLEEP(1)", K::kDo},
    {"DO GET_LOCK('a', 10)", K::kDo, "L"},
    {"SELECT get_lock('x', 0)", K::kSelect, "L"},
    {"SELECT 'GET_LOCK(' , get_lockx(1)", K::kSelect},
    {"SELECT `get_lock`", K::kSelect},
    {"SELECT @v", K::kSelect, "U"},
    {"SELECT a INTO @v FROM t", K::kSelect, "U"},
    {"SELECT @@session.sql_mode", K::kSelect},
    {"SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1", K::kSelect, "F"},
    {"SELECT FOUND_ROWS()", K::kSelect, "F"},
    {"select found_rows ( )", K::kSelect, "F"},
    {"SELECT found_rows FROM t", K::kSelect},
    {"SET @a = 1; SELECT @a", K::kSet, "UM"},
    {"SET PASSWORD = 'x'", K::kOther},
    {"SET ROLE ALL", K::kOther},
    {"SET STATEMENT max_statement_time=1 FOR SELECT 1", K::kOther},
    {"SET", K::kOther},
    {"SET a =", K::kOther},
    {"SET a = (1", K::kOther},
    {"HANDLER t OPEN", K::kOther},
    {"'unterminated", K::kOther},
    {"SELECT 'unterminated", K::kSelect},
    {"/*!50110 unterminated", K::kOther},
};

INSTANTIATE_TEST_SUITE_P(Classify, ClassifyTable, ::testing::ValuesIn(kCases));

struct SetCase {
  const char* sql;
  std::vector<SessionSetting> expected;
  const char* flags = "";
};

}  // namespace

// In sp::parser itself (not the anonymous namespace) so that GoogleTest's
// argument-dependent lookup finds it when printing a failed comparison.
void PrintTo(const SessionSetting& s, std::ostream* os) {
  *os << "{" << static_cast<int>(s.kind) << ", " << s.name << ", " << s.value << "}";
}

namespace {

class SetTable : public ::testing::TestWithParam<SetCase> {};

TEST_P(SetTable, Settings) {
  const SetCase& c = GetParam();
  StatementInfo info = classify(c.sql);
  EXPECT_EQ(info.kind, K::kSet) << c.sql;
  EXPECT_EQ(info.settings, c.expected) << c.sql;
  EXPECT_EQ(flags(info), c.flags) << c.sql;
}

const SetCase kSetCases[] = {
    {"SET autocommit=0", {{S::kSystemVariable, "autocommit", "0"}}},
    {"set AutoCommit = 1 ;", {{S::kSystemVariable, "autocommit", "1"}}},
    {"SET NAMES utf8mb4", {{S::kNames, "names", "utf8mb4"}}},
    {"SET NAMES 'utf8'", {{S::kNames, "names", "utf8"}}},
    {"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci, autocommit=0, @@session.sql_mode='ANSI', "
     "@x := 1, SESSION time_zone='+00:00', GLOBAL max_connections=10, @@global.x=1, "
     "LOCAL wait_timeout=5, @@local.y=2",
     {{S::kNames, "names", "utf8mb4 COLLATE utf8mb4_unicode_ci"},
      {S::kSystemVariable, "autocommit", "0"},
      {S::kSystemVariable, "sql_mode", "'ANSI'"},
      {S::kUserVariable, "x", "1"},
      {S::kSystemVariable, "time_zone", "'+00:00'"},
      {S::kGlobalVariable, "max_connections", "10"},
      {S::kGlobalVariable, "x", "1"},
      {S::kSystemVariable, "wait_timeout", "5"},
      {S::kSystemVariable, "y", "2"}},
     "U"},
    {"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
     {{S::kSessionIsolation, "transaction", "ISOLATION LEVEL READ COMMITTED"}}},
    {"SET LOCAL TRANSACTION READ WRITE", {{S::kSessionIsolation, "transaction", "READ WRITE"}}},
    {"SET TRANSACTION READ ONLY", {{S::kNextTransaction, "transaction", "READ ONLY"}}},
    {"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY",
     {{S::kNextTransaction, "transaction", "ISOLATION LEVEL SERIALIZABLE, READ ONLY"}}},
    {"SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
     {{S::kGlobalVariable, "transaction", "ISOLATION LEVEL READ COMMITTED"}}},
    {"SET CHARACTER SET utf8", {{S::kCharacterSet, "character_set", "utf8"}}},
    {"SET CHARSET latin1", {{S::kCharacterSet, "character_set", "latin1"}}},
    {"SET sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES'), x = 'a,b'",
     {{S::kSystemVariable, "sql_mode", "CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')"},
      {S::kSystemVariable, "x", "'a,b'"}}},
    {"SET @@SESSION.SQL_MODE = DEFAULT", {{S::kSystemVariable, "sql_mode", "DEFAULT"}}},
    {"SET @@wait_timeout=  28800  ", {{S::kSystemVariable, "wait_timeout", "28800"}}},
    {"SET @MyVar = 'x', @`q v` = 2, @'s' = 3",
     {{S::kUserVariable, "myvar", "'x'"}, {S::kUserVariable, "q v", "2"},
      {S::kUserVariable, "s", "3"}},
     "U"},
    {"SET PERSIST max_connections = 100", {{S::kGlobalVariable, "max_connections", "100"}}},
    {"SET `sql_select_limit` = 10", {{S::kSystemVariable, "sql_select_limit", "10"}}},
    {"SET default.key_buffer_size = 1", {{S::kSystemVariable, "default.key_buffer_size", "1"}}},
    {"/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;",
     {{S::kUserVariable, "old_sql_mode", "@@SQL_MODE"},
      {S::kSystemVariable, "sql_mode", "'NO_AUTO_VALUE_ON_ZERO'"}},
     "U"},
    {"SET x = (SELECT 1, 2), y = IF(a, 1, 2)",
     {{S::kSystemVariable, "x", "(SELECT 1, 2)"}, {S::kSystemVariable, "y", "IF(a, 1, 2)"}}},
    {"SET x = 1 /* why */ + 2", {{S::kSystemVariable, "x", "1 /* why */ + 2"}}},
};

INSTANTIATE_TEST_SUITE_P(Classify, SetTable, ::testing::ValuesIn(kSetCases));

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

// uses_last_insert_id was added by the proxy (multiplexed LAST_INSERT_ID()).
TEST(Classify, LastInsertIdReaders) {
  EXPECT_TRUE(classify("SELECT LAST_INSERT_ID()").uses_last_insert_id);
  EXPECT_TRUE(classify("select last_insert_id ( )").uses_last_insert_id);
  EXPECT_TRUE(classify("SELECT @@identity").uses_last_insert_id);
  EXPECT_TRUE(classify("SELECT @@session.last_insert_id").uses_last_insert_id);
  EXPECT_FALSE(classify("SELECT 'LAST_INSERT_ID()'").uses_last_insert_id);
  EXPECT_FALSE(classify("SELECT last_insert_id FROM t").uses_last_insert_id);
  EXPECT_FALSE(classify("INSERT INTO t VALUES (1)").uses_last_insert_id);
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

// KILL names the proxy's own connection ids, so the proxy carries it out.
TEST(Classify, Kill) {
  auto kill = [](std::string_view sql) {
    auto info = classify(sql);
    EXPECT_EQ(info.kind, StatementKind::kKill) << sql;
    return info.kill;
  };
  EXPECT_EQ(kill("KILL 42"), (KillRequest{false, 42, ""}));
  EXPECT_EQ(kill("kill connection 7"), (KillRequest{false, 7, ""}));
  EXPECT_EQ(kill("KILL QUERY 7"), (KillRequest{true, 7, ""}));
  EXPECT_EQ(kill("KILL HARD QUERY 9;"), (KillRequest{true, 9, ""}));
  EXPECT_EQ(kill("KILL SOFT CONNECTION /* c */ 18446744073709551615"),
            (KillRequest{false, 18446744073709551615ULL, ""}));
  EXPECT_EQ(kill("KILL QUERY ID 5").unsupported, "KILL QUERY ID (a query id)");
  EXPECT_EQ(kill("KILL USER app").unsupported, "KILL USER");
  EXPECT_FALSE(kill("KILL CONNECTION_ID()").unsupported.empty());
  EXPECT_FALSE(kill("KILL 1 + 1").unsupported.empty());
  EXPECT_FALSE(kill("KILL 18446744073709551616").unsupported.empty());
  EXPECT_FALSE(kill("KILL").unsupported.empty());
  EXPECT_FALSE(kill("KILL 'x'").unsupported.empty());
  EXPECT_EQ(kill("KILL QUERY @id"), (KillRequest{true, 0, "", "@id"}));
  EXPECT_EQ(kill("kill @`the id`"), (KillRequest{false, 0, "", "@`the id`"}));
  EXPECT_FALSE(kill("KILL @x + 1").unsupported.empty());
  EXPECT_EQ(classify("SELECT kill FROM t").kind, StatementKind::kSelect);
}

}  // namespace
}  // namespace sp::parser

#include "parser/local_queries.hpp"

namespace sp::parser {
namespace {

// SELECT CONNECTION_ID() is answered by the proxy (the id KILL takes).
TEST(LocalQueries, ConnectionId) {
  EXPECT_EQ(connectionIdQuery("SELECT CONNECTION_ID()"), "CONNECTION_ID()");
  EXPECT_EQ(connectionIdQuery("select connection_id ( ) ;"), "connection_id ( )");
  EXPECT_EQ(connectionIdQuery("SELECT CONNECTION_ID() AS id"), "id");
  EXPECT_EQ(connectionIdQuery("SELECT /* who */ CONNECTION_ID() `my id`"), "my id");
  EXPECT_EQ(connectionIdQuery("SELECT CONNECTION_ID() 'cid'"), "cid");
  EXPECT_FALSE(connectionIdQuery("SELECT CONNECTION_ID(), 1").has_value());
  EXPECT_FALSE(connectionIdQuery("SELECT CONNECTION_ID() + 1").has_value());
  EXPECT_FALSE(connectionIdQuery("SELECT CONNECTION_ID() FROM t").has_value());
  EXPECT_FALSE(connectionIdQuery("SELECT 'CONNECTION_ID()'").has_value());
  EXPECT_FALSE(connectionIdQuery("SELECT CONNECTION_ID(); SELECT 1").has_value());
  // The session only looks for that form when classify saw the call.
  EXPECT_TRUE(classify("select connection_id ( )").calls_connection_id);
  EXPECT_FALSE(classify("SELECT 'CONNECTION_ID()'").calls_connection_id);
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

TEST(Classify, DiagnosticsReadsAreFlagged) {
  for (const char* sql : {"SHOW WARNINGS", "show errors limit 1", "SHOW COUNT(*) WARNINGS", "SHOW COUNT(*) ERRORS",
                          "GET DIAGNOSTICS @n = NUMBER", "GET CURRENT DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT",
                          "SELECT @@warning_count", "SELECT @@session.error_count"}) {
    EXPECT_TRUE(classify(sql).reads_diagnostics) << sql;
  }
  for (const char* sql : {"SHOW TABLES", "SELECT warnings FROM t", "SHOW VARIABLES LIKE 'warning%'", "SELECT 1"}) {
    EXPECT_FALSE(classify(sql).reads_diagnostics) << sql;
  }
}

TEST(Classify, NamesTableForTheDiagnosticsRule) {
  for (const char* sql : {"SELECT COUNT(*) FROM msg_00", "select * from `t` join u on 1", "INSERT INTO t VALUES (1)",
                          "SELECT a FROM db.t"}) {
    EXPECT_TRUE(classify(sql).names_table) << sql;
  }
  for (const char* sql : {"SELECT 1", "SELECT 1 FROM DUAL", "SELECT 1 INTO @x", "DO 0", "SET @q = 1"}) {
    EXPECT_FALSE(classify(sql).names_table) << sql;
  }
}

TEST(Classify, ConsistentSnapshotIsFlagged) {
  EXPECT_TRUE(classify("START TRANSACTION WITH CONSISTENT SNAPSHOT").consistent_snapshot);
  EXPECT_TRUE(classify("start transaction read only, with consistent snapshot").consistent_snapshot);
  EXPECT_FALSE(classify("START TRANSACTION").consistent_snapshot);
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

TEST(LocalQueries, ProcesslistForms) {
  EXPECT_EQ(processlistQuery("SHOW PROCESSLIST"), false);
  EXPECT_EQ(processlistQuery("show full processlist;"), true);
  EXPECT_EQ(processlistQuery("/* gui */ SHOW   FULL\nPROCESSLIST"), true);
  EXPECT_FALSE(processlistQuery("SHOW PROCESSLIST x"));
  EXPECT_FALSE(processlistQuery("SELECT * FROM information_schema.PROCESSLIST"));
  EXPECT_FALSE(processlistQuery("SHOW FULL TABLES"));
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

TEST(Classify, LoadDataLocal) {
  EXPECT_TRUE(classify("LOAD DATA LOCAL INFILE '/tmp/x' INTO TABLE t").load_data_local);
  EXPECT_TRUE(classify("load data low_priority local infile 'x' into table t").load_data_local);
  EXPECT_TRUE(classify("LOAD XML CONCURRENT LOCAL INFILE 'x' INTO TABLE t").load_data_local);
  EXPECT_TRUE(classify("/* tool */ LOAD DATA /*!LOCAL*/ INFILE 'x' INTO TABLE t").load_data_local);
  EXPECT_FALSE(classify("LOAD DATA INFILE '/tmp/x' INTO TABLE t").load_data_local);  // the server's own file
  EXPECT_FALSE(classify("SELECT 'LOAD DATA LOCAL INFILE'").load_data_local);
  EXPECT_FALSE(classify("LOAD INDEX INTO CACHE t").load_data_local);
}

}  // namespace
}  // namespace sp::parser
