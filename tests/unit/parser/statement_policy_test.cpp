// privilegesNeeded(): a table of statements and what each needs, written as
// "global PRIV", "table CMD db.obj", "database name", "ddl CMD [db.]obj",
// "routine CMD obj", "dynamic WHAT" (joined with " | "; empty = nothing).
#include "parser/statement_policy.hpp"

#include <gtest/gtest.h>

namespace sp::parser {
namespace {

std::string describe(const std::vector<PrivilegeNeed>& needs) {
  std::string out;
  for (const auto& n : needs) {
    if (!out.empty()) out += " | ";
    switch (n.need) {
      case Need::kGlobalPrivilege: out += "global " + n.privilege; break;
      case Need::kSystemTable: out += "table " + n.command + " " + n.database + "." + n.object; break;
      case Need::kDatabase: out += "database " + n.object; break;
      case Need::kDdl:
        out += (n.routine ? "routine " : "ddl ") + n.command + " " + (n.database.empty() ? "" : n.database + ".") +
               n.object;
        break;
      case Need::kUncheckedDynamicSql: out += "dynamic " + n.statement; break;
    }
  }
  return out;
}

struct Case {
  const char* sql;
  const char* expected;
};

const Case kPolicyCases[] = {
    // Nothing beyond rows.
    {"SELECT * FROM msg WHERE conv_id = 1", ""},
    {"INSERT INTO t (a) VALUES ('SHUTDOWN'), ('GRANT ALL')", ""},
    {"SET autocommit = 0, sql_mode = 'ANSI'", ""},
    {"SET NAMES utf8mb4", ""},
    {"SET @x = 1", ""},
    {"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", ""},
    {"SET ROLE NONE", ""},
    {"SELECT @@global.max_connections", ""},
    {"SELECT reset, flush, `shutdown` FROM t", ""},
    {"START TRANSACTION", ""},
    {"CREATE TEMPORARY TABLE tt (a INT)", ""},
    {"create or replace temporary table tt (a int)", ""},
    {"DROP TEMPORARY TABLE IF EXISTS tt", ""},
    {"DROP PREPARE s", ""},
    {"LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE t", ""},
    {"SELECT my.load_file('x')", ""},
    {"SELECT 1 /* SHUTDOWN */ -- GRANT\n", ""},
    {"PREPARE s FROM 'SELECT * FROM t WHERE a = ?'", ""},
    {"EXECUTE IMMEDIATE 'SELECT 1'", ""},
    {"EXECUTE s USING @a", ""},
    {"SHOW TABLES", ""},
    {"KILL 5", ""},
    // Accounts.
    {"SET PASSWORD = PASSWORD('x')", "database mysql"},
    {"set password for 'app'@'%' = 'x'", "database mysql"},
    {"SET DEFAULT ROLE r FOR app", "global CREATE USER"},
    {"CREATE USER zz IDENTIFIED BY 'x'", "global CREATE USER"},
    {"ALTER USER app IDENTIFIED BY 'x'", "global CREATE USER"},
    {"DROP USER IF EXISTS zz", "global CREATE USER"},
    {"RENAME USER a TO b", "global CREATE USER"},
    {"CREATE ROLE r", "global CREATE USER"},
    {"GRANT ALL ON *.* TO app", "global GRANT OPTION"},
    {"REVOKE SELECT ON im.* FROM app", "global GRANT OPTION"},
    // Server administration.
    {"SHUTDOWN", "global SHUTDOWN"},
    {"  shutdown  ", "global SHUTDOWN"},
    {"SET GLOBAL max_connections = 10", "global SUPER"},
    {"SET @@global.max_connections = 10", "global SUPER"},
    {"SET @@GLOBAL.read_only = 1", "global SUPER"},
    {"SET PERSIST max_connections = 10", "global SUPER"},
    {"SET autocommit = 1, GLOBAL max_connections = 10", "global SUPER"},
    {"SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE", "global SUPER"},
    {"SET STATEMENT max_statement_time = 1 FOR SHUTDOWN", "global SHUTDOWN"},
    {"INSTALL SONAME 'ha_blackhole'", "table INSERT mysql.plugin"},
    {"INSTALL PLUGIN blackhole SONAME 'ha_blackhole'", "table INSERT mysql.plugin"},
    {"UNINSTALL PLUGIN blackhole", "table DELETE mysql.plugin"},
    {"CREATE DATABASE zz", "database zz"},
    {"CREATE SCHEMA IF NOT EXISTS `zz`", "database zz"},
    {"DROP DATABASE im", "database im"},
    {"ALTER DATABASE im CHARACTER SET latin1", "database im"},
    {"FLUSH TABLES", "global RELOAD"},
    {"FLUSH TABLES WITH READ LOCK", "global RELOAD"},
    {"RESET MASTER", "global RELOAD"},
    {"PURGE BINARY LOGS BEFORE NOW()", "global SUPER, BINLOG ADMIN"},
    {"CHANGE MASTER TO MASTER_HOST = 'x'", "global SUPER, REPLICATION SLAVE ADMIN"},
    {"START SLAVE", "global SUPER, REPLICATION SLAVE ADMIN"},
    {"STOP REPLICA", "global SUPER, REPLICATION SLAVE ADMIN"},
    {"STOP ALL SLAVES", "global SUPER, REPLICATION SLAVE ADMIN"},
    {"BINLOG 'AAAA'", "global SUPER, BINLOG REPLAY"},
    {"CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'x')", "global SUPER, FEDERATED ADMIN"},
    // Files of the server's host.
    {"LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "global FILE"},
    {"LOAD DATA CONCURRENT INFILE '/etc/passwd' INTO TABLE t", "global FILE"},
    {"LOAD XML INFILE '/x.xml' INTO TABLE t", "global FILE"},
    {"SELECT * FROM t INTO OUTFILE '/tmp/x'", "global FILE"},
    {"SELECT a INTO DUMPFILE '/tmp/x' FROM t", "global FILE"},
    {"SELECT LOAD_FILE('/etc/passwd')", "global FILE"},
    {"SELECT content FROM msg WHERE conv_id = 1 AND content = load_file ('/etc/passwd')", "global FILE"},
    {"INSERT INTO t VALUES ((SELECT LOAD_FILE('/etc/shadow')))", "global FILE"},
    // Case, comments, version comments, backticks.
    {"/* hi */ ShUtDoWn", "global SHUTDOWN"},
    {"-- x\nSHUTDOWN", "global SHUTDOWN"},
    {"/*!SHUTDOWN */", "global SHUTDOWN"},
    {"/*!50000 SET GLOBAL max_connections = 1 */", "global SUPER"},
    {"/*M!100100 GRANT ALL ON *.* TO app */", "global GRANT OPTION"},
    {"SELECT /*!LOAD_FILE*/('/etc/passwd')", "global FILE"},
    {"SET `global`.x = 1", ""},
    // Multi-statements: each statement counts.
    {"SELECT 1; SHUTDOWN", "global SHUTDOWN"},
    {"SELECT 1;SET PASSWORD = 'x'; SELECT 2", "database mysql"},
    {"SELECT ';SHUTDOWN'; SELECT 2", ""},
    {"SELECT 1; FLUSH TABLES; GRANT ALL ON *.* TO x", "global RELOAD | global GRANT OPTION"},
    // Dynamic SQL.
    {"PREPARE s FROM 'SHUTDOWN'", "global SHUTDOWN"},
    {"PREPARE s FROM 'SET PASSWORD = ''x'''", "database mysql"},
    {"PREPARE s FROM \"SET GLOBAL max_connections = 1\"", "global SUPER"},
    {"EXECUTE IMMEDIATE 'SELECT LOAD_FILE(\\'/etc/passwd\\')'", "global FILE"},
    {"EXECUTE IMMEDIATE 'GRANT ALL ON *.* TO x' USING 1", "global GRANT OPTION"},
    {"PREPARE s FROM 'PREPARE t FROM ''SHUTDOWN'''", "global SHUTDOWN"},
    {"PREPARE s FROM @q", "dynamic PREPARE"},
    {"EXECUTE IMMEDIATE CONCAT('SHUT', 'DOWN')", "dynamic EXECUTE IMMEDIATE"},
    {"SET @q = 'SHUTDOWN'; PREPARE s FROM @q; EXECUTE s", "dynamic PREPARE"},
    // DDL.
    {"CREATE TABLE t2 (a INT)", "ddl CREATE t2"},
    {"CREATE TABLE IF NOT EXISTS im.t2 LIKE im.t1", "ddl CREATE im.t2"},
    {"DROP TABLE IF EXISTS `t1`", "ddl DROP t1"},
    {"ALTER TABLE t1 ADD b INT", "ddl ALTER t1"},
    {"ALTER ONLINE IGNORE TABLE t1 ADD b INT", "ddl ALTER t1"},
    {"TRUNCATE t1", "ddl DROP t1"},
    {"TRUNCATE TABLE im.t1", "ddl DROP im.t1"},
    {"RENAME TABLE t1 TO t3", "ddl DROP, ALTER t1"},
    {"CREATE UNIQUE INDEX i ON t1 (a)", "ddl INDEX t1"},
    {"DROP INDEX i ON t1", "ddl INDEX t1"},
    {"CREATE OR REPLACE ALGORITHM = MERGE DEFINER = 'a'@'%' SQL SECURITY INVOKER VIEW v AS SELECT 1", "ddl CREATE VIEW v"},
    {"DROP VIEW v", "ddl DROP v"},
    {"CREATE TRIGGER tr BEFORE INSERT ON t1 FOR EACH ROW SET @x = 1", "ddl TRIGGER t1"},
    {"CREATE SEQUENCE s1", "ddl CREATE s1"},
    {"CREATE DEFINER = CURRENT_USER EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", "routine CREATE e"},
    {"DROP PROCEDURE IF EXISTS p", "routine DROP p"},
    {"CREATE FUNCTION f() RETURNS INT RETURN 1", "routine CREATE f"},
    // Stored program and compound statement bodies.
    {"CREATE PROCEDURE p() SHUTDOWN", "routine CREATE p | global SHUTDOWN"},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; SET PASSWORD = 'x'; END", "routine CREATE p | database mysql"},
    {"CREATE PROCEDURE p() BEGIN SET GLOBAL max_connections = 1; END", "routine CREATE p | global SUPER"},
    {"CREATE PROCEDURE p() BEGIN DECLARE q TEXT; PREPARE s FROM q; EXECUTE s; END",
     "routine CREATE p | dynamic PREPARE"},
    {"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO FLUSH LOGS", "routine CREATE e | global RELOAD"},
    {"BEGIN NOT ATOMIC SHUTDOWN; END", "global SHUTDOWN"},
    {"BEGIN NOT ATOMIC SELECT 1; END", ""},
    {"IF 1 THEN GRANT ALL ON *.* TO x; END IF", "global GRANT OPTION"},
    {"lbl: LOOP DROP DATABASE im; END LOOP", "database im"},
    {"BEGIN NOT ATOMIC DROP TABLE t1; END", "ddl DROP t1"},
    // KILL where its id would name a backend's thread (issue 30): refused for
    // everyone by the session, named here as a CONNECTION ADMIN need.
    {"PREPARE s FROM 'KILL 5'", "global CONNECTION ADMIN"},
    {"EXECUTE IMMEDIATE 'kill query 5'", "global CONNECTION ADMIN"},
    {"CREATE PROCEDURE p() KILL 5", "routine CREATE p | global CONNECTION ADMIN"},
    {"CREATE PROCEDURE p() BEGIN SELECT 1; KILL QUERY 5; END", "routine CREATE p | global CONNECTION ADMIN"},
    {"BEGIN NOT ATOMIC KILL 5; END", "global CONNECTION ADMIN"},
    {"SELECT kill FROM t", ""},
};

TEST(StatementPolicy, Table) {
  for (const auto& c : kPolicyCases) {
    EXPECT_EQ(describe(privilegesNeeded(c.sql)), c.expected) << c.sql;
  }
}

TEST(StatementPolicy, NoBackslashEscapesSplitsWhereTheServerDoes) {
  // With backslash escapes this is one string; without, a string and SHUTDOWN.
  const char* sql = "SELECT '\\'; SHUTDOWN; -- '";
  EXPECT_EQ(describe(privilegesNeeded(sql, true)), "");
  EXPECT_EQ(describe(privilegesNeeded(sql, false)), "global SHUTDOWN");
  // And the other way round: a quote escaped only when escapes are on.
  const char* other = "SELECT 'it\\'s; flush it'";
  EXPECT_EQ(describe(privilegesNeeded(other, true)), "");
}

TEST(StatementPolicy, NestedKillIsNamed) {
  auto needs = privilegesNeeded("CREATE PROCEDURE p() BEGIN SELECT 1; KILL 5; END");
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[1].statement, kNestedKillStatement);
}

TEST(StatementPolicy, StatementNames) {
  auto needs = privilegesNeeded("SELECT 1; SET PASSWORD = 'x'; SELECT 1 INTO OUTFILE '/tmp/x'");
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].statement, "SET PASSWORD");
  EXPECT_EQ(needs[1].statement, "SELECT INTO OUTFILE");
}

}  // namespace
}  // namespace sp::parser
