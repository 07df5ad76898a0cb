// libmariadb (the C client API most drivers sit on) through the proxy:
// connect, queries, NULLs, binary values, errors with SQLSTATE, transactions,
// COM_INIT_DB, streamed results. Ports come from the environment ctest sets.
#include <gtest/gtest.h>
#include <mysql.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

unsigned envPort(const char* name, unsigned fallback) {
  const char* value = std::getenv(name);
  return value ? static_cast<unsigned>(std::strtoul(value, nullptr, 10)) : fallback;
}

const unsigned kProxyPort = envPort("SP_PROXY_PORT", 16033);
const unsigned kDb0Port = envPort("SP_DB0_PORT", 3307);

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using Connection = std::unique_ptr<MYSQL, MysqlCloser>;
struct ResultFree {
  void operator()(MYSQL_RES* r) const { mysql_free_result(r); }
};
using Result = std::unique_ptr<MYSQL_RES, ResultFree>;

// Returns the handle even on failure so the caller can read mysql_errno().
Connection connectTo(unsigned port, const char* user, const char* password, const char* db,
                     bool* ok) {
  Connection conn(mysql_init(nullptr));
  unsigned timeout = 10;
  mysql_options(conn.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  *ok = mysql_real_connect(conn.get(), "127.0.0.1", user, password, db, port, nullptr, 0) != nullptr;
  return conn;
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    bool ok = false;
    conn_ = connectTo(kProxyPort, "app", "app_pw", "im", &ok);
    ASSERT_TRUE(ok) << "connect through proxy on port " << kProxyPort << ": " << mysql_error(conn_.get());
    table_ = "it_capi_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    if (conn_) exec("DROP TABLE IF EXISTS " + table_);
  }

  bool exec(const std::string& sql) {
    return mysql_real_query(conn_.get(), sql.data(), sql.size()) == 0;
  }
  // All rows of a query, NULL as "<null>".
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::vector<std::vector<std::string>> out;
    EXPECT_TRUE(exec(sql)) << sql << ": " << mysql_error(conn_.get());
    Result res(mysql_store_result(conn_.get()));
    if (!res) return out;
    const unsigned columns = mysql_num_fields(res.get());
    while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
      unsigned long* lengths = mysql_fetch_lengths(res.get());
      std::vector<std::string> values;
      for (unsigned i = 0; i < columns; ++i) {
        values.push_back(row[i] ? std::string(row[i], lengths[i]) : std::string("<null>"));
      }
      out.push_back(std::move(values));
    }
    return out;
  }
  std::string scalar(const std::string& sql) {
    auto r = rows(sql);
    return r.size() == 1 && r[0].size() == 1 ? r[0][0] : "<not one value>";
  }

  Connection conn_;
  std::string table_;
};

TEST_F(CApi, SelectValuesAndNulls) {
  ASSERT_TRUE(exec("SELECT 1 AS one, 'a' AS letter, NULL AS nothing, 2.50 AS num"));
  Result res(mysql_store_result(conn_.get()));
  ASSERT_NE(res, nullptr);
  ASSERT_EQ(mysql_num_fields(res.get()), 4u);
  EXPECT_EQ(mysql_num_rows(res.get()), 1u);
  MYSQL_FIELD* fields = mysql_fetch_fields(res.get());
  EXPECT_STREQ(fields[0].name, "one");
  EXPECT_EQ(fields[0].type, MYSQL_TYPE_LONG);
  EXPECT_STREQ(fields[2].name, "nothing");
  EXPECT_EQ(fields[3].type, MYSQL_TYPE_NEWDECIMAL);
  MYSQL_ROW row = mysql_fetch_row(res.get());
  ASSERT_NE(row, nullptr);
  EXPECT_STREQ(row[0], "1");
  EXPECT_STREQ(row[1], "a");
  EXPECT_EQ(row[2], nullptr);
  EXPECT_STREQ(row[3], "2.50");
  EXPECT_EQ(mysql_fetch_row(res.get()), nullptr);
}

TEST_F(CApi, ServerInfoAndPing) {
  EXPECT_NE(std::string(mysql_get_server_info(conn_.get())), "");
  EXPECT_EQ(mysql_ping(conn_.get()), 0) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT DATABASE()"), "im");
}

TEST_F(CApi, DmlCountsInsertIdAndBinary) {
  ASSERT_TRUE(exec("CREATE TABLE " + table_ +
                   " (id INT AUTO_INCREMENT PRIMARY KEY, v VARBINARY(64), s VARCHAR(20))"))
      << mysql_error(conn_.get());
  const std::string binary("a\0b\x01\xff'\"\\\n\r\x1a", 11);
  std::string escaped(binary.size() * 2 + 1, '\0');
  escaped.resize(mysql_real_escape_string(conn_.get(), escaped.data(), binary.data(), binary.size()));
  ASSERT_TRUE(exec("INSERT INTO " + table_ + " (v, s) VALUES ('" + escaped + "', 'x'), ('', NULL)"))
      << mysql_error(conn_.get());
  EXPECT_EQ(mysql_affected_rows(conn_.get()), 2u);
  EXPECT_EQ(mysql_insert_id(conn_.get()), 1u);
  ASSERT_TRUE(exec("UPDATE " + table_ + " SET s = 'y' WHERE s IS NULL"));
  EXPECT_EQ(mysql_affected_rows(conn_.get()), 1u);
  auto r = rows("SELECT v, s, LENGTH(v) FROM " + table_ + " ORDER BY id");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0][0], binary);
  EXPECT_EQ(r[0][2], "11");
  EXPECT_EQ(r[1], (std::vector<std::string>{"", "y", "0"}));
}

TEST_F(CApi, ErrorsCarryErrnoAndSqlstate) {
  EXPECT_FALSE(exec("SELEC 1"));
  EXPECT_EQ(mysql_errno(conn_.get()), 1064u);
  EXPECT_STREQ(mysql_sqlstate(conn_.get()), "42000");
  EXPECT_FALSE(exec("SELECT * FROM it_capi_no_such_table"));
  EXPECT_EQ(mysql_errno(conn_.get()), 1146u);
  EXPECT_STREQ(mysql_sqlstate(conn_.get()), "42S02");
  EXPECT_EQ(scalar("SELECT 'usable'"), "usable");
}

TEST_F(CApi, WrongPasswordAndUnknownUser) {
  for (const char* user : {"app", "it_capi_nobody"}) {
    bool ok = true;
    Connection bad = connectTo(kProxyPort, user, "wrong_pw", "im", &ok);
    EXPECT_FALSE(ok) << user;
    EXPECT_EQ(mysql_errno(bad.get()), 1045u) << user << ": " << mysql_error(bad.get());
    EXPECT_STREQ(mysql_sqlstate(bad.get()), "28000") << user;
  }
}

TEST_F(CApi, TransactionsRollbackAndCommit) {
  ASSERT_TRUE(exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY) ENGINE=InnoDB"));
  bool ok = false;
  Connection other = connectTo(kDb0Port, "proxy", "proxy_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(other.get());
  auto countFromOther = [&] {
    const std::string sql = "SELECT COUNT(*) FROM " + table_;
    EXPECT_EQ(mysql_real_query(other.get(), sql.data(), sql.size()), 0) << mysql_error(other.get());
    Result res(mysql_store_result(other.get()));
    MYSQL_ROW row = res ? mysql_fetch_row(res.get()) : nullptr;
    return row && row[0] ? std::string(row[0]) : std::string("?");
  };
  ASSERT_EQ(mysql_autocommit(conn_.get(), 0), 0);
  ASSERT_TRUE(exec("INSERT INTO " + table_ + " VALUES (1)"));
  EXPECT_EQ(countFromOther(), "0");
  ASSERT_EQ(mysql_rollback(conn_.get()), 0);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM " + table_), "0");
  ASSERT_TRUE(exec("INSERT INTO " + table_ + " VALUES (2)"));
  ASSERT_EQ(mysql_commit(conn_.get()), 0);
  EXPECT_EQ(countFromOther(), "1");
  ASSERT_EQ(mysql_autocommit(conn_.get(), 1), 0);
}

// COM_CHANGE_USER (connection pools between borrowers): re-authenticated by
// the proxy, the session starts over (user variables, transaction, sql_mode
// gone); a wrong password is refused with 1045 and the session goes on.
TEST_F(CApi, ChangeUserResetsTheSession) {
  ASSERT_TRUE(exec("SET @it_change = 7"));
  ASSERT_TRUE(exec("SET SESSION sql_mode = 'ANSI_QUOTES'"));
  ASSERT_TRUE(exec("BEGIN"));
  ASSERT_EQ(mysql_change_user(conn_.get(), "nodb", "nodb_pw", "information_schema"), 0) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT DATABASE()"), "information_schema");
  EXPECT_EQ(scalar("SELECT @it_change IS NULL"), "1");
  EXPECT_EQ(scalar("SELECT @@sql_mode LIKE '%ANSI_QUOTES%'"), "0");
  EXPECT_EQ(scalar("SELECT @@in_transaction"), "0");
  // The proxy's own view of the user changed too (KILL checks it, among others).
  EXPECT_NE(mysql_change_user(conn_.get(), "app", "wrong_pw", "im"), 0);
  EXPECT_EQ(mysql_errno(conn_.get()), 1045u) << mysql_error(conn_.get());
  ASSERT_EQ(mysql_change_user(conn_.get(), "app", "app_pw", "im"), 0) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT DATABASE()"), "im");
  EXPECT_EQ(scalar("SELECT 1 + 1"), "2");
}

// users[].max_connections counts a session that became the user with
// COM_CHANGE_USER as one of its sessions: at the limit the change is refused
// with the server's 1203 and the session goes on as the user it was.
TEST_F(CApi, ChangeUserCountsAgainstTheNewUsersConnectionLimit) {
  bool ok = false;
  Connection solo = connectTo(kProxyPort, "solo", "solo_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(solo.get());
  EXPECT_NE(mysql_change_user(conn_.get(), "solo", "solo_pw", "im"), 0);
  EXPECT_EQ(mysql_errno(conn_.get()), 1203u) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT 1 + 1"), "2");  // still the app user's session
  solo.reset();                            // frees solo's one place
  bool changed = false;
  for (int attempt = 0; attempt < 50 && !changed; ++attempt) {  // the place frees when that session's coroutine ends
    changed = mysql_change_user(conn_.get(), "solo", "solo_pw", "im") == 0;
    if (!changed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(changed) << mysql_error(conn_.get());
  Connection second = connectTo(kProxyPort, "solo", "solo_pw", "im", &ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(mysql_errno(second.get()), 1203u) << mysql_error(second.get());
  // Changing back to app frees solo's place again.
  ASSERT_EQ(mysql_change_user(conn_.get(), "app", "app_pw", "im"), 0) << mysql_error(conn_.get());
  bool reconnected = false;
  for (int attempt = 0; attempt < 50 && !reconnected; ++attempt) {
    Connection again = connectTo(kProxyPort, "solo", "solo_pw", "im", &reconnected);
    if (!reconnected) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(reconnected);
}

// Drivers choose how to escape from SERVER_STATUS_NO_BACKSLASH_ESCAPES
// (mysql_real_escape_string): the flag must be right in every packet,
// including the OK the proxy writes itself for BEGIN and COM_PING.
TEST_F(CApi, NoBackslashEscapesFlagReachesTheClient) {
  ASSERT_TRUE(exec("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"));
  ASSERT_TRUE(exec("BEGIN"));  // answered by the proxy (the BEGIN is deferred)
  unsigned status = 0;
  mariadb_get_infov(conn_.get(), MARIADB_CONNECTION_SERVER_STATUS, &status);
  EXPECT_TRUE(status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) << status;
  char escaped[16];
  mysql_real_escape_string(conn_.get(), escaped, "a'b", 3);
  EXPECT_STREQ(escaped, "a''b");  // not a\'b
  ASSERT_TRUE(exec("ROLLBACK"));
  ASSERT_EQ(mysql_ping(conn_.get()), 0);
  mariadb_get_infov(conn_.get(), MARIADB_CONNECTION_SERVER_STATUS, &status);
  EXPECT_TRUE(status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) << status;
  ASSERT_TRUE(exec("SET SESSION sql_mode = DEFAULT"));
  ASSERT_EQ(mysql_ping(conn_.get()), 0);
  mariadb_get_infov(conn_.get(), MARIADB_CONNECTION_SERVER_STATUS, &status);
  EXPECT_FALSE(status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) << status;
}

// COM_FIELD_LIST (mysql_list_fields, the CLI's name completion): a logical
// table lists its physical table's columns; a physical one is refused as
// SHOW COLUMNS FROM it would be (9116 for an application user).
TEST_F(CApi, FieldListOfLogicalAndPhysicalTables) {
  bool ok = false;
  Connection direct = connectTo(kDb0Port, "proxy", "proxy_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(direct.get());
  Result physical(mysql_list_fields(direct.get(), "msg_00", nullptr));
  ASSERT_TRUE(physical) << mysql_error(direct.get());
  Result logical(mysql_list_fields(conn_.get(), "msg", nullptr));
  ASSERT_TRUE(logical) << mysql_error(conn_.get());
  ASSERT_EQ(mysql_num_fields(logical.get()), mysql_num_fields(physical.get()));
  for (unsigned i = 0; i < mysql_num_fields(logical.get()); ++i) {
    EXPECT_STREQ(mysql_fetch_field_direct(logical.get(), i)->name, mysql_fetch_field_direct(physical.get(), i)->name);
  }
  Result refused(mysql_list_fields(conn_.get(), "msg_05", nullptr));
  EXPECT_FALSE(refused);
  EXPECT_EQ(mysql_errno(conn_.get()), 9116u) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT 1"), "1");  // the session carries on
}

// A change of a logical table prepared with COM_STMT_PREPARE runs like the
// text one (issue 31, one rule set for both protocols): every physical table
// of msg gets the index, then loses it.
TEST_F(CApi, PreparedSchemaChangeOfALogicalTable) {
  auto run = [&](const std::string& sql) {
    MYSQL_STMT* stmt = mysql_stmt_init(conn_.get());
    EXPECT_EQ(mysql_stmt_prepare(stmt, sql.data(), sql.size()), 0) << sql << ": " << mysql_stmt_error(stmt);
    EXPECT_EQ(mysql_stmt_param_count(stmt), 0u);
    EXPECT_EQ(mysql_stmt_execute(stmt), 0) << sql << ": " << mysql_stmt_error(stmt);
    mysql_stmt_close(stmt);
  };
  auto indexed = [&](unsigned port, const char* table) {
    bool ok = false;
    Connection direct = connectTo(port, "proxy", "proxy_pw", "im", &ok);
    EXPECT_TRUE(ok) << mysql_error(direct.get());
    const std::string sql = std::string("SHOW INDEX FROM ") + table + " WHERE Key_name = 'it_capi_prepared'";
    EXPECT_EQ(mysql_query(direct.get(), sql.c_str()), 0) << mysql_error(direct.get());
    Result r(mysql_store_result(direct.get()));
    return r && mysql_num_rows(r.get()) > 0;
  };
  const unsigned db1_port = envPort("SP_DB1_PORT", 3308);
  run("ALTER TABLE msg ADD INDEX it_capi_prepared (msg_type)");
  EXPECT_TRUE(indexed(kDb0Port, "msg_00"));
  EXPECT_TRUE(indexed(db1_port, "msg_15"));
  run("DROP INDEX it_capi_prepared ON msg");
  EXPECT_FALSE(indexed(kDb0Port, "msg_00"));
  EXPECT_FALSE(indexed(db1_port, "msg_15"));
}

TEST_F(CApi, SelectDbChangesDatabase) {
  ASSERT_EQ(mysql_select_db(conn_.get(), "information_schema"), 0) << mysql_error(conn_.get());
  EXPECT_EQ(scalar("SELECT DATABASE()"), "information_schema");
  // The server's own answer for the backend account: 1049 with global
  // privileges, 1044 under the least-privilege grants (docs/security.md).
  bool ok = false;
  Connection direct = connectTo(kDb0Port, "proxy", "proxy_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(direct.get());
  EXPECT_NE(mysql_select_db(direct.get(), "it_capi_no_such_db"), 0);
  const unsigned server_errno = mysql_errno(direct.get());
  EXPECT_TRUE(server_errno == 1044u || server_errno == 1049u) << server_errno;
  EXPECT_NE(mysql_select_db(conn_.get(), "it_capi_no_such_db"), 0);
  EXPECT_EQ(mysql_errno(conn_.get()), server_errno);
  ASSERT_EQ(mysql_select_db(conn_.get(), "im"), 0);
  EXPECT_EQ(scalar("SELECT DATABASE()"), "im");
}

TEST_F(CApi, StreamedLargeResult) {
  ASSERT_TRUE(exec("SELECT seq, REPEAT('x', 100) FROM seq_1_to_100000"));
  Result res(mysql_use_result(conn_.get()));
  ASSERT_NE(res, nullptr);
  unsigned long long count = 0, sum = 0;
  while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
    ++count;
    sum += std::strtoull(row[0], nullptr, 10);
    ASSERT_EQ(mysql_fetch_lengths(res.get())[1], 100u);
  }
  EXPECT_EQ(mysql_errno(conn_.get()), 0u) << mysql_error(conn_.get());
  EXPECT_EQ(count, 100000u);
  EXPECT_EQ(sum, 100000ull * 100001ull / 2);
}

TEST_F(CApi, Utf8mb4RoundTrip) {
  const std::string text = "ok \xF0\x9F\x98\x80 \xE4\xB8\xAD";  // "ok 😀 中"
  EXPECT_EQ(scalar("SELECT '" + text + "'"), text);
  EXPECT_EQ(scalar("SELECT CHAR_LENGTH('" + text + "')"), "6");
}

}  // namespace
