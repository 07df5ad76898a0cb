// Session state tracking (CLIENT_SESSION_TRACK, issue 30) through the proxy,
// compared with the server: the same statements on a direct connection to
// the default backend and on a proxy connection, and after each one the
// SERVER_SESSION_STATE_CHANGED flag and the entries libmariadb reads
// (mysql_session_track_get_first/next) must be the same. Entries of one type
// are compared as a sorted list: with session_track_system_variables = '*'
// the server lists variables in its own hash order, which depends on the
// list in force (docs/compatibility.md, "Session state tracking").
#include <gtest/gtest.h>
#include <mysql.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
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

Connection connectTo(unsigned port, const char* user, const char* password, const char* db,
                     unsigned long flags = 0) {
  Connection conn(mysql_init(nullptr));
  unsigned timeout = 10;
  mysql_options(conn.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (!mysql_real_connect(conn.get(), "127.0.0.1", user, password, db, port, nullptr, flags)) {
    ADD_FAILURE() << "connect to port " << port << " as " << user << ": " << mysql_error(conn.get());
    return nullptr;
  }
  return conn;
}

// What a client reads after its last command: the flag and, when it is set,
// every entry by type ("0:name=value", "1:schema", "2:1"), sorted by type.
std::string tracked(MYSQL* m) {
  unsigned status = 0;
  mariadb_get_infov(m, MARIADB_CONNECTION_SERVER_STATUS, &status);
  if (!(status & SERVER_SESSION_STATE_CHANGED)) return "-";
  std::ostringstream out;
  out << "changed";
  for (int type : {SESSION_TRACK_SYSTEM_VARIABLES, SESSION_TRACK_SCHEMA, SESSION_TRACK_STATE_CHANGE}) {
    std::vector<std::string> entries;
    const char* data = nullptr;
    size_t length = 0;
    if (mysql_session_track_get_first(m, static_cast<enum_session_state_type>(type), &data, &length) == 0) {
      do {
        entries.emplace_back(data, length);
      } while (mysql_session_track_get_next(m, static_cast<enum_session_state_type>(type), &data, &length) == 0);
    }
    if (type == SESSION_TRACK_SYSTEM_VARIABLES) {
      // name, value, name, value...: pairs, sorted by name.
      std::vector<std::string> pairs;
      for (size_t i = 0; i + 1 < entries.size(); i += 2) pairs.push_back(entries[i] + "=" + entries[i + 1]);
      std::sort(pairs.begin(), pairs.end());
      entries = pairs;
    }
    for (const auto& e : entries) out << " " << type << ":" << e;
  }
  return out.str();
}

// The statement's outcome as a client sees it: its error, or what each of
// its results tracked (" | " between the results of a multi-statement packet).
std::string run(MYSQL* m, const std::string& sql) {
  if (mysql_real_query(m, sql.data(), sql.size()) != 0) return "ERROR " + std::to_string(mysql_errno(m));
  std::string out;
  for (;;) {
    if (MYSQL_RES* r = mysql_store_result(m)) mysql_free_result(r);
    out += tracked(m);
    const int next = mysql_next_result(m);
    if (next > 0) return out + " | ERROR " + std::to_string(mysql_errno(m));
    if (next != 0) return out;
    out += " | ";
  }
}

class SessionTrack : public ::testing::Test {
 protected:
  void SetUp() override {
    direct_ = connectTo(kDb0Port, "proxy", "proxy_pw", "im");
    proxied_ = connectTo(kProxyPort, "app", "app_pw", "im");
    ASSERT_TRUE(direct_ && proxied_);
  }
  // Runs `sql` both ways and expects the same outcome; returns it.
  std::string both(const std::string& sql) {
    const std::string expected = run(direct_.get(), sql);
    const std::string got = run(proxied_.get(), sql);
    EXPECT_EQ(got, expected) << sql;
    return expected;
  }
  Connection direct_;
  Connection proxied_;
};

TEST_F(SessionTrack, ConnectNamingADatabaseReportsIt) {
  EXPECT_EQ(tracked(proxied_.get()), tracked(direct_.get()));
  EXPECT_EQ(tracked(proxied_.get()), "changed 1:im");
}

TEST_F(SessionTrack, EveryStatementReportsWhatTheServerReports) {
  const std::vector<std::string> statements = {
      // MariaDB's defaults: autocommit, the character sets, time_zone; the schema.
      "SET time_zone = '+01:00'",
      "SET sql_mode = 'ANSI', autocommit = 0",
      "SET autocommit = 1",
      "SET NAMES latin1",
      "SET NAMES utf8mb4",
      "SET @a = 1",
      "SELECT 1",
      "SET session_track_state_change = ON",
      "SET @a = 2",
      "SET time_zone = '+01:00'",
      "SET session_track_system_variables = '*'",
      "SET sql_mode = '', time_zone = 'SYSTEM', wait_timeout = 100",
      "SET session_track_system_variables = 'sql_mode,session_track_system_variables'",
      "SET sql_mode = 'ANSI_QUOTES', time_zone = '+02:00'",
      "SET session_track_system_variables = 'nosuch'",
      "SET session_track_schema = 2",
      "SET session_track_schema = OFF",
      "USE im",
      "SET session_track_schema = ON, session_track_state_change = OFF",
      "SET session_track_system_variables = 'Time_Zone , sql_mode'",
      "SET sql_mode = DEFAULT, time_zone = '+03:00', autocommit = 1",
      "SET session_track_system_variables = ''",
      "SET time_zone = '+04:00', sql_mode = 'ANSI'",
      "SET session_track_system_variables = DEFAULT",
      "SET time_zone = '+05:00'",
      "SET session_track_transaction_info = OFF",
  };
  int reports = 0;
  for (const auto& sql : statements) {
    if (both(sql).starts_with("changed")) ++reports;
  }
  EXPECT_GE(reports, 10);  // the sequence exercises reports, not only their absence
}

TEST_F(SessionTrack, StateIsStillCarriedAcrossConnectionsAfterTheClientTurnsReportsOff) {
  // The client's settings are its own: the proxy's backend connections keep
  // reporting everything, so what the session sets reaches every connection
  // it borrows next.
  both("SET session_track_system_variables = '', session_track_state_change = OFF, session_track_schema = OFF");
  both("SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')");
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(mysql_query(proxied_.get(), "SELECT @@sql_mode LIKE '%ANSI_QUOTES%'"), 0) << mysql_error(proxied_.get());
    MYSQL_RES* r = mysql_store_result(proxied_.get());
    ASSERT_NE(r, nullptr);
    MYSQL_ROW row = mysql_fetch_row(r);
    ASSERT_NE(row, nullptr);
    EXPECT_STREQ(row[0], "1");
    mysql_free_result(r);
  }
}

TEST(SessionTrackPacket, ASetInAMultiStatementPacketIsTrackedLikeAlone) {
  Connection direct = connectTo(kDb0Port, "proxy", "proxy_pw", "im", CLIENT_MULTI_STATEMENTS);
  Connection proxied = connectTo(kProxyPort, "app", "app_pw", "im", CLIENT_MULTI_STATEMENTS);
  ASSERT_TRUE(direct && proxied);
  for (const std::string sql : {"SET session_track_state_change = ON; SET @z = 1; SET time_zone = '+09:00'",
                                "SET session_track_system_variables = 'sql_mode'; SET time_zone = '+10:00', "
                                "sql_mode = 'ANSI'",
                                "SET session_track_schema = OFF; USE im; SET session_track_schema = ON; USE im"}) {
    const std::string expected = run(direct.get(), sql);
    EXPECT_EQ(run(proxied.get(), sql), expected) << sql;
    EXPECT_NE(expected.find(" | "), std::string::npos) << expected;  // several results, each compared
  }
}

TEST_F(SessionTrack, PreparedSetIsTrackedLikeTheText) {
  for (MYSQL* m : {direct_.get(), proxied_.get()}) {
    MYSQL_STMT* stmt = mysql_stmt_init(m);
    const std::string sql = "SET session_track_system_variables = ?";
    ASSERT_EQ(mysql_stmt_prepare(stmt, sql.data(), sql.size()), 0) << mysql_stmt_error(stmt);
    MYSQL_BIND bind;
    std::memset(&bind, 0, sizeof bind);
    char value[] = "sql_mode";
    unsigned long length = std::strlen(value);
    bind.buffer_type = MYSQL_TYPE_STRING;
    bind.buffer = value;
    bind.buffer_length = length;
    bind.length = &length;
    ASSERT_EQ(mysql_stmt_bind_param(stmt, &bind), 0);
    ASSERT_EQ(mysql_stmt_execute(stmt), 0) << mysql_stmt_error(stmt);
    mysql_stmt_close(stmt);
  }
  const std::string told = both("SET sql_mode = 'ANSI', time_zone = '+06:00'");
  EXPECT_TRUE(told.starts_with("changed 0:sql_mode=")) << told;
  EXPECT_EQ(told.find("time_zone"), std::string::npos) << told;
  EXPECT_EQ(both("SET time_zone = '+07:00'"), "-");
}

TEST_F(SessionTrack, TransactionStateIsRefusedClearly) {
  ASSERT_NE(mysql_query(proxied_.get(), "SET session_track_transaction_info = STATE"), 0);
  EXPECT_EQ(mysql_errno(proxied_.get()), 1235u);
  EXPECT_NE(std::string(mysql_error(proxied_.get())).find("session_track_transaction_info"), std::string::npos);
  // Nothing of the statement took effect: the session goes on as it was.
  EXPECT_EQ(run(proxied_.get(), "SET time_zone = '+08:00'"), "changed 0:time_zone=+08:00");
  // PREPARE ... FROM would change the backend connection behind the proxy's back.
  ASSERT_NE(mysql_query(proxied_.get(), "PREPARE s FROM 'SET session_track_schema = OFF'"), 0);
  EXPECT_EQ(mysql_errno(proxied_.get()), 1235u);
}

}  // namespace
