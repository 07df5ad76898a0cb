// What the proxy reads of a statement inside a transaction it keeps as XA.
#include "parser/transaction_control.hpp"

#include <gtest/gtest.h>

namespace sp::parser {
namespace {

TEST(TransactionControl, PlainBeginsOnly) {
  for (std::string_view sql : {"BEGIN", "begin work;", "START  TRANSACTION", "start transaction\tread write"}) {
    EXPECT_TRUE(isPlainBegin(sql)) << sql;
  }
  for (std::string_view sql : {"START TRANSACTION READ ONLY", "START TRANSACTION WITH CONSISTENT SNAPSHOT",
                               "/* x */ BEGIN", "XA START 'a'", "BEGINS"}) {
    EXPECT_FALSE(isPlainBegin(sql)) << sql;
  }
}

TEST(TransactionControl, ChainOrRelease) {
  EXPECT_TRUE(chainsOrReleases("COMMIT AND CHAIN"));
  EXPECT_TRUE(chainsOrReleases("rollback release"));
  EXPECT_FALSE(chainsOrReleases("COMMIT"));
}

TEST(TransactionControl, FirstControlStatementOfAPacket) {
  EXPECT_EQ(firstTransactionControl("SELECT 1; UPDATE t SET x = 1", {}), std::nullopt);
  EXPECT_EQ(firstTransactionControl("SELECT 1; COMMIT; SELECT 2", {}), std::optional<std::string_view>("COMMIT"));
  EXPECT_EQ(firstTransactionControl("INSERT INTO t VALUES (1); CREATE TABLE u (x INT)", {}),
            std::optional<std::string_view>("CREATE TABLE u (x INT)"));
  EXPECT_EQ(firstTransactionControl("SAVEPOINT s; SELECT 1", {}), std::optional<std::string_view>("SAVEPOINT s"));
  EXPECT_EQ(firstTransactionControl("CREATE TEMPORARY TABLE t (x INT); SELECT 1", {}), std::nullopt);
  EXPECT_EQ(firstTransactionControl("UPDATE t SET x = 1; SET autocommit = 1", {}),
            std::optional<std::string_view>("SET autocommit = 1"));
  EXPECT_EQ(firstTransactionControl("SET sql_mode = ''; SELECT 1", {}), std::nullopt);
}

}  // namespace
}  // namespace sp::parser
