// Which statements commit the open transaction first on MariaDB (checked on
// 10.11 inside XA START, where each of these is refused with 1399).
#include "parser/implicit_commit.hpp"

#include <gtest/gtest.h>

namespace sp::parser {
namespace {

bool commits(std::string_view sql) { return causesImplicitCommit(sql, classify(sql).kind); }

TEST(ImplicitCommit, DdlLocksBeginAndAdministration) {
  for (std::string_view sql : {"CREATE TABLE t (x INT)", "create index i on t (x)", "ALTER TABLE t ADD y INT",
                               "DROP TABLE t", "TRUNCATE TABLE t", "RENAME TABLE a TO b", "CREATE DATABASE d",
                               "LOCK TABLES t WRITE", "FLUSH TABLES WITH READ LOCK", "BEGIN", "START TRANSACTION",
                               "GRANT SELECT ON d.t TO u", "REVOKE SELECT ON d.t FROM u", "ANALYZE TABLE t",
                               "OPTIMIZE TABLE t", "CHECK TABLE t", "REPAIR TABLE t", "FLUSH TABLES",
                               "SET PASSWORD = PASSWORD('x')", "LOAD INDEX INTO CACHE t", "STOP SLAVE",
                               "CHANGE MASTER TO MASTER_HOST='h'"}) {
    EXPECT_TRUE(commits(sql)) << sql;
  }
}

TEST(ImplicitCommit, DataTemporaryTablesAndTheClientsOwnXa) {
  for (std::string_view sql : {"SELECT 1", "INSERT INTO t VALUES (1)", "UPDATE t SET x = 1", "DELETE FROM t",
                               "CREATE TEMPORARY TABLE t (x INT)", "CREATE OR REPLACE TEMPORARY TABLE t (x INT)",
                               "DROP TEMPORARY TABLE IF EXISTS t", "UNLOCK TABLES", "SET @password = 1",
                               "SET autocommit = 0", "XA START 'x'", "CHECKSUM TABLE t", "COMMIT", "ROLLBACK",
                               "SAVEPOINT s", "SHOW TABLES", "DO 1"}) {
    EXPECT_FALSE(commits(sql)) << sql;
  }
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

AutocommitChange change(std::string_view sql) { return autocommitChange(classify(sql)); }

// The values checked on 10.11 (`SET autocommit = 0; SET autocommit = <v>;
// SELECT @@autocommit`): 1, ON, TRUE, "ON" and 'on' give 1; '1', 'true', 2
// and 1.0 are refused by the server; (1), 1+0 and DEFAULT give 1 too, but
// only the server knows what an expression is worth.
TEST(AutocommitChange, LiteralsTheServerReadsAsBooleans) {
  for (std::string_view sql : {"SET autocommit = 1", "set AUTOCOMMIT=on", "SET @@autocommit = TRUE",
                               "SET SESSION autocommit = 'ON'", "SET @@session.autocommit = \"on\"",
                               "SET LOCAL autocommit = 1", "SET autocommit = 0, autocommit = 1"}) {
    EXPECT_EQ(change(sql), AutocommitChange::kOn) << sql;
  }
  for (std::string_view sql : {"SET autocommit = 0", "SET autocommit = off", "SET @@autocommit = FALSE",
                               "SET autocommit = 'OFF'", "SET autocommit = 1, autocommit = 0"}) {
    EXPECT_EQ(change(sql), AutocommitChange::kOff) << sql;
  }
  for (std::string_view sql : {"SET autocommit = @v", "SET autocommit = (1)", "SET autocommit = 1 + 0",
                               "SET autocommit = DEFAULT", "SET autocommit = ?", "SET autocommit = '1'"}) {
    EXPECT_EQ(change(sql), AutocommitChange::kUnknown) << sql;
  }
  for (std::string_view sql : {"SET sql_mode = ''", "SET GLOBAL autocommit = 1", "SET @autocommit = 1",
                               "SELECT @@autocommit", "SET STATEMENT max_statement_time = 1 FOR SELECT 1"}) {
    EXPECT_EQ(change(sql), AutocommitChange::kNone) << sql;
  }
}

}  // namespace
}  // namespace sp::parser
