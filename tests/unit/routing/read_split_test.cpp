// Which statements a replica may answer, and the per-statement hint.
#include "routing/read_split.hpp"

#include <gtest/gtest.h>

#include "parser/analysis.hpp"

namespace sp::routing {
namespace {

bool readable(std::string_view sql) {
  parser::StatementAnalysis a;
  parser::analyze(sql, {}, a);
  return replicaReadable(a.info, sql, a.tokens);
}

TEST(ReadSplit, PlainReadsGoToReplicas) {
  EXPECT_TRUE(readable("SELECT * FROM msg WHERE conv_id = 7"));
  EXPECT_TRUE(readable("select count(*) from msg"));
  EXPECT_TRUE(readable("SELECT a, LAST_VALUE(a) OVER (ORDER BY b) FROM t"));
  EXPECT_TRUE(readable("SELECT 'for update', `into` FROM t"));
  EXPECT_TRUE(readable("(SELECT 1) UNION (SELECT 2)"));
  EXPECT_TRUE(readable("SELECT t.lock FROM t"));
}

TEST(ReadSplit, WritesLocksAndSessionStateStayOnThePrimary) {
  for (const char* sql : {
           "INSERT INTO msg VALUES (1)",
           "UPDATE msg SET a = 1",
           "DELETE FROM msg",
           "SELECT * FROM msg WHERE conv_id = 1 FOR UPDATE",
           "SELECT * FROM msg FOR SHARE",
           "SELECT * FROM msg LOCK IN SHARE MODE",
           "SELECT a INTO @x FROM t",
           "SELECT a FROM t INTO OUTFILE '/tmp/x'",
           "SELECT @x",
           "SELECT @@server_id",
           "SELECT LAST_INSERT_ID()",
           "SELECT FOUND_ROWS()",
           "SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1",
           "SELECT GET_LOCK('a', 1)",
           "SELECT NEXTVAL(s)",
           "SELECT NEXT VALUE FOR s",
           "SELECT CONNECTION_ID()",
           "SELECT 1; SELECT 2",
           "SHOW WARNINGS",
           "SHOW TABLES",
           "CALL p()",
           "SET @a = 1",
           "SELECT ROW_COUNT()",
           "SELECT MASTER_GTID_WAIT('0-1-1', 1)",
       }) {
    EXPECT_FALSE(readable(sql)) << sql;
  }
}

TEST(ReadSplit, HintOnlyInLeadingComments) {
  EXPECT_EQ(readHint("/* shardproxy_reads=replica */ SELECT 1"), ReadHint::kReplica);
  EXPECT_EQ(readHint("  /* app=x */ /* SHARDPROXY_READS=PRIMARY */SELECT 1"), ReadHint::kPrimary);
  EXPECT_EQ(readHint("SELECT 1 /* shardproxy_reads=replica */"), ReadHint::kNone);
  EXPECT_EQ(readHint("SELECT '/* shardproxy_reads=replica */'"), ReadHint::kNone);
  EXPECT_EQ(readHint("/*!100000 shardproxy_reads=replica */ SELECT 1"), ReadHint::kNone);
  EXPECT_EQ(readHint("/* shardproxy_reads=replica"), ReadHint::kNone);
  EXPECT_EQ(readHint(""), ReadHint::kNone);
}

}  // namespace
}  // namespace sp::routing
