// The statements a primary switch sends: quoting (an account's password is
// data, not SQL) and the exact text MariaDB is given.
#include <gtest/gtest.h>

#include "proxy/ha/replication_sql.hpp"

namespace sp::proxy {
namespace {

TEST(ReplicationSql, StringsAreQuotedAsMariaDbReadsThem) {
  EXPECT_EQ(sqlString("plain"), "'plain'");
  EXPECT_EQ(sqlString("it's"), "'it\\'s'");
  EXPECT_EQ(sqlString("back\\slash"), "'back\\\\slash'");
  EXPECT_EQ(sqlString(std::string_view("a\0b", 3)), "'a\\0b'");
}

TEST(ReplicationSql, ChangeMasterNamesEverythingWithGtid) {
  EXPECT_EQ(changeMasterSql({"127.0.0.1", 3477}, "proxy_repl", "pw'; DROP TABLE x; --", "slave_pos"),
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 3477, MASTER_USER = 'proxy_repl', "
            "MASTER_PASSWORD = 'pw\\'; DROP TABLE x; --', MASTER_USE_GTID = slave_pos");
}

TEST(ReplicationSql, GtidWaitTakesSecondsWithMilliseconds) {
  EXPECT_EQ(gtidWaitSql("0-1-100,1-2-5", 4500), "SELECT MASTER_GTID_WAIT('0-1-100,1-2-5', 4.500)");
  EXPECT_EQ(gtidWaitSql("0-1-1", 7), "SELECT MASTER_GTID_WAIT('0-1-1', 0.007)");
}

}  // namespace
}  // namespace sp::proxy
