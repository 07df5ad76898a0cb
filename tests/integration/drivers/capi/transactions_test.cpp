// Transactions through the proxy with libmariadb (issue 11): read-your-write
// inside START TRANSACTION with prepared statements (mysql_stmt_*) and with
// text queries, on a shard of db1 and one of db0, then mysql_rollback() (row
// gone) and mysql_commit() (row visible from another connection and on the
// backend); autocommit off by mysql_autocommit(mysql, 0) and by text
// spellings, then ROLLBACK; a multi-row INSERT spanning both backends under
// autocommit off: OK and part of the transaction, or refused; never OK then
// lost. Rows: conv_id 9_100_000 + shard (shard 2 on db0, 9 on db1).
//
// SP_TX_DIRECT=1 runs the same against MariaDB itself (db0, database im_txref
// with an unsharded msg) to prove the test right.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "stmt_helpers.hpp"

namespace sp::drivers {
namespace {

const bool kDirect = [] {
  const char* v = std::getenv("SP_TX_DIRECT");
  return v && std::string(v) == "1";
}();
const unsigned kTargetPort = kDirect ? envPort("SP_DB0_PORT", 3307) : envPort("SP_PROXY_PORT", 16033);
const unsigned kBackendPort[2] = {envPort("SP_DB0_PORT", 3307), envPort("SP_DB1_PORT", 3308)};

constexpr uint64_t kConvBase = 9'100'000;  // % 16 == 0
constexpr uint64_t kDb0Conv = kConvBase + 2, kDb1Conv = kConvBase + 9;
const std::vector<uint64_t> kSpan = {kConvBase + 3, kConvBase + 12, kConvBase + 5, kConvBase + 14};  // db0, db1, db0, db1

struct MsgRow {
  uint64_t conv, seq, msg_id;
  std::string content() const { return "capi-" + std::to_string(conv) + "-" + std::to_string(seq); }
  std::string where() const { return "conv_id = " + std::to_string(conv) + " AND seq = " + std::to_string(seq); }
};

class Transactions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!kDirect) return;
    bool ok = false;
    Connection db0 = connectTo(kBackendPort[0], "root", "root_pw", "im", &ok);
    ASSERT_TRUE(ok) << mysql_error(db0.get());
    for (const char* sql : {"CREATE DATABASE IF NOT EXISTS im_txref", "CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00"}) {
      ASSERT_EQ(mysql_query(db0.get(), sql), 0) << mysql_error(db0.get());
    }
  }

  void SetUp() override {
    bool ok = false;
    checker_ = target(&ok);
    ASSERT_TRUE(ok) << "target on " << kTargetPort << ": " << mysql_error(checker_.get());
    for (int i = 0; i < 2; ++i) {
      backend_[i] = connectTo(kBackendPort[i], "root", "root_pw", "im", &ok);
      ASSERT_TRUE(ok) << mysql_error(backend_[i].get());
    }
    std::random_device rd;
    seq_base_ = (uint64_t(1'000'000) + rd() % 999'000'000) * 1000;
    cleanup();
  }
  void TearDown() override { cleanup(); }

  static Connection target(bool* ok) {
    return kDirect ? connectTo(kTargetPort, "root", "root_pw", "im_txref", ok)
                   : connectTo(kTargetPort, "app", "app_pw", "im", ok);
  }
  void cleanup() {
    std::vector<uint64_t> convs = {kDb0Conv, kDb1Conv};
    convs.insert(convs.end(), kSpan.begin(), kSpan.end());
    for (uint64_t conv : convs) {
      std::string sql = "DELETE FROM msg WHERE conv_id = " + std::to_string(conv);
      EXPECT_EQ(mysql_query(checker_.get(), sql.c_str()), 0) << sql << ": " << mysql_error(checker_.get());
    }
  }
  MsgRow next(uint64_t conv) {
    ++counter_;
    return {conv, seq_base_ + counter_, conv * 1000 + counter_};
  }
  static std::string count(MYSQL* conn, const std::string& sql) {
    std::string error;
    Rows rows = textRows(conn, sql, &error);
    if (!error.empty()) return "error " + error;
    return rows.size() == 1 && rows[0][0] ? *rows[0][0] : "?";
  }
  // "<through another connection of the target>,<in the physical table on its backend>"
  std::string counts(const MsgRow& r) {
    std::string through = count(checker_.get(), "SELECT COUNT(*) FROM msg WHERE " + r.where());
    if (kDirect) return through + "," + through;
    unsigned shard = unsigned(r.conv % 16);
    std::string table = std::string("msg_") + (shard < 10 ? "0" : "") + std::to_string(shard);
    return through + "," + count(backend_[shard / 8].get(), "SELECT COUNT(*) FROM " + table + " WHERE " + r.where());
  }
  void expectCount(const MsgRow& r, int want, const std::string& when) {
    EXPECT_EQ(counts(r), std::to_string(want) + "," + std::to_string(want))
        << when << ": conv_id " << r.conv << " seq " << r.seq << " (shard " << r.conv % 16
        << "), counted through another connection and on the backend";
  }
  static bool text(MYSQL* conn, const std::string& sql, std::string* error) {
    if (mysql_real_query(conn, sql.data(), sql.size()) == 0) {
      if (MYSQL_RES* res = mysql_store_result(conn)) mysql_free_result(res);
      return true;
    }
    *error = "ERROR " + std::to_string(mysql_errno(conn)) + ": " + mysql_error(conn);
    return false;
  }
  // INSERT of r, prepared or text; "" or the error.
  static std::string insert(MYSQL* conn, const MsgRow& r, bool prepared) {
    std::string error;
    if (prepared) {
      Stmt st(conn,
              "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (?, ?, ?, 77, 1, ?, 0)");
      if (!st.prepared()) return "prepare: ERROR " + std::to_string(st.errNo()) + ": " + st.error();
      Params p;
      p.num(MYSQL_TYPE_LONGLONG, r.conv, true).num(MYSQL_TYPE_LONGLONG, r.seq, true)
          .num(MYSQL_TYPE_LONGLONG, r.msg_id, true).text(MYSQL_TYPE_BLOB, r.content());
      if (!st.execute(p)) return "ERROR " + std::to_string(st.errNo()) + ": " + st.error();
      return st.affected() == 1 ? "" : "affected " + std::to_string(st.affected());
    }
    std::string sql = "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (" +
                      std::to_string(r.conv) + ", " + std::to_string(r.seq) + ", " + std::to_string(r.msg_id) +
                      ", 77, 1, '" + r.content() + "', 0)";
    if (!text(conn, sql, &error)) return error;
    return mysql_affected_rows(conn) == 1 ? "" : "affected " + std::to_string(mysql_affected_rows(conn));
  }
  // "seq:content" per row of r seen by conn, or "ERROR ...".
  static std::vector<std::string> readBack(MYSQL* conn, const MsgRow& r, bool prepared) {
    std::vector<std::string> out;
    Rows rows;
    if (prepared) {
      Stmt st(conn, "SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?");
      if (!st.prepared()) return {"prepare: ERROR " + std::to_string(st.errNo()) + ": " + st.error()};
      Params p;
      p.num(MYSQL_TYPE_LONGLONG, r.conv, true).num(MYSQL_TYPE_LONGLONG, r.seq, true);
      if (!st.execute(p)) return {"ERROR " + std::to_string(st.errNo()) + ": " + st.error()};
      rows = st.rows();
    } else {
      std::string error;
      rows = textRows(conn, "SELECT seq, content FROM msg WHERE " + r.where(), &error);
      if (!error.empty()) return {"ERROR " + std::to_string(mysql_errno(conn)) + ": " + error};
    }
    for (const auto& row : rows) out.push_back(row[0].value_or("NULL") + ":" + row[1].value_or("NULL"));
    return out;
  }

  void readYourWrite(uint64_t conv, bool prepared, bool commit) {
    SCOPED_TRACE(std::string("read-your-write ") + (prepared ? "prepared" : "text") + ", shard " +
                 std::to_string(conv % 16) + ", " + (commit ? "commit" : "rollback"));
    MsgRow r = next(conv);
    bool ok = false;
    Connection c = target(&ok);
    ASSERT_TRUE(ok) << mysql_error(c.get());
    std::string error;
    ASSERT_TRUE(text(c.get(), "START TRANSACTION", &error)) << error;
    ASSERT_EQ(insert(c.get(), r, prepared), "");
    EXPECT_EQ(readBack(c.get(), r, prepared), std::vector<std::string>{std::to_string(r.seq) + ":" + r.content()})
        << "SELECT of the row inside the transaction";
    expectCount(r, 0, "uncommitted, seen from outside");
    if (commit) {
      EXPECT_EQ(mysql_commit(c.get()), 0) << mysql_error(c.get());
    } else {
      EXPECT_EQ(mysql_rollback(c.get()), 0) << mysql_error(c.get());
    }
    c.reset();
    expectCount(r, commit ? 1 : 0, commit ? "after mysql_commit" : "after mysql_rollback");
  }

  void autocommitOff(const std::string& spelling, uint64_t conv, bool prepared) {
    SCOPED_TRACE(spelling + (prepared ? ", prepared" : ", text") + ", shard " + std::to_string(conv % 16));
    MsgRow r = next(conv);
    bool ok = false;
    Connection c = target(&ok);
    ASSERT_TRUE(ok) << mysql_error(c.get());
    std::string error;
    if (spelling == "mysql_autocommit(mysql, 0)") {
      ASSERT_EQ(mysql_autocommit(c.get(), 0), 0) << mysql_error(c.get());
    } else {
      ASSERT_TRUE(text(c.get(), spelling, &error)) << error;
    }
    EXPECT_EQ(count(c.get(), "SELECT @@autocommit"), "0");
    EXPECT_EQ(c->server_status & SERVER_STATUS_AUTOCOMMIT, 0u) << "status flags of the last OK";
    ASSERT_EQ(insert(c.get(), r, prepared), "");
    EXPECT_EQ(readBack(c.get(), r, prepared), std::vector<std::string>{std::to_string(r.seq) + ":" + r.content()})
        << "read your write";
    expectCount(r, 0, "uncommitted, seen from outside");
    EXPECT_TRUE(text(c.get(), "ROLLBACK", &error)) << error;
    c.reset();
    expectCount(r, 0, "after ROLLBACK");
  }

  void spanningInsert(bool prepared, bool commit) {
    SCOPED_TRACE(std::string("multi-backend INSERT under autocommit off, ") + (prepared ? "prepared" : "text") +
                 (commit ? ", COMMIT" : ", ROLLBACK"));
    std::vector<MsgRow> rows;
    std::string sql = "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ";
    Params p;
    for (uint64_t conv : kSpan) {
      MsgRow r = next(conv);
      if (!rows.empty()) sql += ", ";
      if (prepared) {
        sql += "(?, ?, ?, 77, 1, 'span', 0)";
        p.num(MYSQL_TYPE_LONGLONG, r.conv, true).num(MYSQL_TYPE_LONGLONG, r.seq, true)
            .num(MYSQL_TYPE_LONGLONG, r.msg_id, true);
      } else {
        sql += "(" + std::to_string(r.conv) + ", " + std::to_string(r.seq) + ", " + std::to_string(r.msg_id) +
               ", 77, 1, 'span', 0)";
      }
      rows.push_back(r);
    }
    bool ok = false;
    Connection c = target(&ok);
    ASSERT_TRUE(ok) << mysql_error(c.get());
    ASSERT_EQ(mysql_autocommit(c.get(), 0), 0) << mysql_error(c.get());
    std::string outcome;
    uint64_t affected = 0;
    if (prepared) {
      Stmt st(c.get(), sql);
      if (!st.prepared() || !st.execute(p)) {
        outcome = "ERROR " + std::to_string(st.errNo()) + ": " + st.error();
      } else {
        affected = st.affected();
      }
    } else if (!text(c.get(), sql, &outcome)) {
      // outcome holds the error
    } else {
      affected = mysql_affected_rows(c.get());
    }
    int want = 0;
    if (outcome.empty()) {
      outcome = "OK";
      EXPECT_EQ(affected, rows.size());
      if (commit) {
        EXPECT_EQ(mysql_commit(c.get()), 0) << mysql_error(c.get());
        want = 1;
      } else {
        EXPECT_EQ(mysql_rollback(c.get()), 0) << mysql_error(c.get());
      }
    } else {
      EXPECT_EQ(mysql_rollback(c.get()), 0) << mysql_error(c.get());
    }
    c.reset();
    std::printf("  multi-backend INSERT (%s, then %s): %s\n", prepared ? "prepared" : "text",
                commit ? "COMMIT" : "ROLLBACK", outcome.c_str());
    for (const MsgRow& r : rows) expectCount(r, want, outcome);
  }

  Connection checker_;
  Connection backend_[2];
  uint64_t seq_base_ = 0;
  uint64_t counter_ = 0;
};

TEST_F(Transactions, PreparedReadYourWriteDb1) {
  for (bool commit : {false, true}) readYourWrite(kDb1Conv, true, commit);
}
TEST_F(Transactions, PreparedReadYourWriteDb0) {
  for (bool commit : {false, true}) readYourWrite(kDb0Conv, true, commit);
}
TEST_F(Transactions, TextReadYourWriteDb1) {
  for (bool commit : {false, true}) readYourWrite(kDb1Conv, false, commit);
}
TEST_F(Transactions, TextReadYourWriteDb0) {
  for (bool commit : {false, true}) readYourWrite(kDb0Conv, false, commit);
}
TEST_F(Transactions, AutocommitOffThenRollback) {
  for (uint64_t conv : {kDb1Conv, kDb0Conv}) {
    for (bool prepared : {true, false}) {
      for (const char* spelling : {"mysql_autocommit(mysql, 0)", "SET autocommit=false", "SET SESSION autocommit = 'off'",
                                   "SET @@autocommit = FALSE"}) {
        autocommitOff(spelling, conv, prepared);
      }
    }
  }
}
TEST_F(Transactions, MultiBackendInsertUnderAutocommitOff) {
  for (bool prepared : {true, false}) {
    for (bool commit : {false, true}) {
      spanningInsert(prepared, commit);
      cleanup();
    }
  }
}

}  // namespace
}  // namespace sp::drivers
