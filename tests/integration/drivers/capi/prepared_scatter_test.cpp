// Prepared statements that span shards (IN lists over several msg shards,
// aggregates): the binary result set through the proxy must equal what one
// server returns for the same statement over the same rows. The reference is
// an unsharded copy of the rows in one table on db0, queried with the same
// prepared statement straight on the backend; rows (as libmariadb converts
// them to text) and column types are compared.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "stmt_helpers.hpp"

namespace sp::drivers {
namespace {

const unsigned kDb0Port = envPort("SP_DB0_PORT", 3307);

class PreparedScatter : public ::testing::Test {
 protected:
  void SetUp() override {
    bool ok = false;
    proxy_ = connectTo(kProxyPort, "app", "app_pw", "im", &ok);
    ASSERT_TRUE(ok) << "proxy on " << kProxyPort << ": " << mysql_error(proxy_.get());
    db0_ = connectTo(kDb0Port, "proxy", "proxy_pw", "im", &ok);
    ASSERT_TRUE(ok) << "backend on " << kDb0Port << ": " << mysql_error(db0_.get());
    std::random_device rd;
    // A multiple of 16 below 2^53: conv base_ + k lives on shard k.
    base_ = ((uint64_t(rd()) << 16 | (rd() & 0xffff)) % (uint64_t(1) << 44)) * 16 + (uint64_t(1) << 50);
    ref_ = "it_ps_scatter_ref_" + std::to_string(rd());
    exec(db0_.get(), "CREATE TABLE " + ref_ + " LIKE msg_00");
    // 16 conversations x 4 rows; msg_type, status and created_at vary so that
    // groups, ties and orderings are not trivial. sender_uid ties on purpose.
    for (uint64_t k = 0; k < 16; ++k) {
      for (uint64_t j = 0; j < 4; ++j) {
        const uint64_t conv = base_ + k;
        std::string values = "(" + std::to_string(conv) + ", " + std::to_string(j + 1) + ", " +
                             std::to_string(conv * 8 + j) + ", " + std::to_string(1000 + (k * 3 + j) % 5) + ", " +
                             std::to_string(1 + (k + j) % 4) + ", 'c" + std::to_string((k * 7 + j) % 11) + "', " +
                             std::to_string((k + j) % 3) + ", '2025-0" + std::to_string(1 + j) + "-1" +
                             std::to_string(k % 10) + " 10:00:00.12" + std::to_string(j) + "')";
        const std::string cols = " (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) VALUES ";
        exec(proxy_.get(), "INSERT INTO msg" + cols + values);
        exec(db0_.get(), "INSERT INTO " + ref_ + cols + values);
      }
    }
  }
  void TearDown() override {
    if (!db0_) return;
    exec(db0_.get(), "DROP TABLE IF EXISTS " + ref_);
    if (!proxy_) return;
    for (uint64_t k = 0; k < 16; ++k) exec(proxy_.get(), "DELETE FROM msg WHERE conv_id = " + std::to_string(base_ + k));
  }
  static void exec(MYSQL* conn, const std::string& sql) {
    std::string error;
    textRows(conn, sql, &error);
    EXPECT_EQ(error, "") << sql;
  }
  // Runs `sql` (naming the table `msg`) as a prepared statement through the
  // proxy and on the reference table, with the same parameters; both must
  // succeed with equal rows and column types.
  void expectSameAsOneServer(const std::string& sql, const std::function<void(Params&)>& bind, size_t min_rows = 1) {
    std::string ref_sql = sql;
    ref_sql.replace(ref_sql.find(" msg "), 5, " " + ref_ + " ");
    Stmt through(proxy_.get(), sql);
    Stmt reference(db0_.get(), ref_sql);
    ASSERT_TRUE(through.prepared()) << through.error() << "\n" << sql;
    ASSERT_TRUE(reference.prepared()) << reference.error() << "\n" << ref_sql;
    Params p, q;
    bind(p);
    bind(q);
    ASSERT_TRUE(through.execute(p)) << through.errNo() << " " << through.error() << "\n" << sql;
    ASSERT_TRUE(reference.execute(q)) << reference.error() << "\n" << ref_sql;
    EXPECT_GE(reference.rows().size(), min_rows) << "the case tests nothing: " << ref_sql;
    EXPECT_EQ(through.rows(), reference.rows()) << sql;
    EXPECT_EQ(through.columnTypes(), reference.columnTypes()) << sql;
  }
  Params& convs(Params& p, std::initializer_list<uint64_t> shards) {
    for (uint64_t k : shards) p.num(MYSQL_TYPE_LONGLONG, base_ + k, true);
    return p;
  }

  Connection proxy_;
  Connection db0_;
  uint64_t base_ = 0;
  std::string ref_;
};

TEST_F(PreparedScatter, AggregatesOverAnInList) {
  expectSameAsOneServer(
      "SELECT COUNT(*), SUM(seq), AVG(msg_type), MIN(created_at), MAX(content), COUNT(DISTINCT sender_uid) "
      "FROM msg WHERE conv_id IN (?, ?, ?, ?, ?)",
      [&](Params& p) { convs(p, {0, 3, 7, 8, 15}); });
  // Every shard, the key bound as different integer types and a DECIMAL.
  expectSameAsOneServer("SELECT SUM(msg_id), MAX(seq) FROM msg WHERE conv_id IN (?, ?, ?) AND status <> ?",
                        [&](Params& p) {
                          p.num(MYSQL_TYPE_LONGLONG, int64_t(base_ + 1))
                              .text(MYSQL_TYPE_NEWDECIMAL, std::to_string(base_ + 9))
                              .num(MYSQL_TYPE_DOUBLE, double(base_ + 12))
                              .num(MYSQL_TYPE_TINY, int8_t(2));
                        });
}

TEST_F(PreparedScatter, GroupByHavingOrderByLimit) {
  expectSameAsOneServer(
      "SELECT msg_type, COUNT(*) AS n, SUM(seq) FROM msg WHERE conv_id IN (?, ?, ?, ?, ?, ?) "
      "GROUP BY msg_type HAVING COUNT(*) > ? ORDER BY n DESC, msg_type LIMIT ?",
      [&](Params& p) { convs(p, {1, 2, 5, 9, 10, 14}).num(MYSQL_TYPE_LONG, int32_t(2)).num(MYSQL_TYPE_LONG, int32_t(3)); });
}

TEST_F(PreparedScatter, MergeSortedRowsWithOffsetAndDates) {
  expectSameAsOneServer(
      "SELECT conv_id, seq, content, created_at, status FROM msg WHERE conv_id IN (?, ?, ?, ?) "
      "AND created_at >= ? AND content <> ? ORDER BY created_at DESC, conv_id, seq LIMIT ?, ?",
      [&](Params& p) {
        convs(p, {4, 6, 11, 13})
            .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 2, 1))
            .text(MYSQL_TYPE_VAR_STRING, "c3")
            .num(MYSQL_TYPE_LONG, int32_t(1))
            .num(MYSQL_TYPE_LONG, int32_t(7));
      },
      7);
}

TEST_F(PreparedScatter, ReexecutedWithOtherValuesAndNulls) {
  const std::string sql = "SELECT COUNT(*), MIN(seq), MAX(created_at) FROM msg WHERE conv_id IN (?, ?) AND sender_uid <> ?";
  Stmt through(proxy_.get(), sql);
  ASSERT_TRUE(through.prepared()) << through.error();
  for (uint64_t k = 0; k < 15; ++k) {
    Params p;
    convs(p, {k, k + 1}).num(MYSQL_TYPE_LONGLONG, uint64_t(1000 + k % 5), true);
    ASSERT_TRUE(through.execute(p)) << through.error();
    const std::string in = std::to_string(base_ + k) + ", " + std::to_string(base_ + k + 1);
    Rows want = textRows(db0_.get(), "SELECT COUNT(*), MIN(seq), MAX(created_at) FROM " + ref_ +
                                         " WHERE conv_id IN (" + in + ") AND sender_uid <> " + std::to_string(1000 + k % 5));
    EXPECT_EQ(through.rows(), want) << k;
  }
  // A NULL in the list matches nothing; a NULL comparison empties the aggregate (COUNT 0, MIN NULL).
  Params p;
  p.num(MYSQL_TYPE_LONGLONG, base_ + 2, true).null().null();
  ASSERT_TRUE(through.execute(p)) << through.error();
  EXPECT_EQ(through.rows(), (Rows{Row{"0", std::nullopt, std::nullopt}}));
}

TEST_F(PreparedScatter, StringParametersWithQuotesAndBackslashes) {
  exec(proxy_.get(), "UPDATE msg SET content = 'it''s a \\\\ path' WHERE conv_id = " + std::to_string(base_ + 3) +
                         " AND seq = 2");
  exec(db0_.get(), "UPDATE " + ref_ + " SET content = 'it''s a \\\\ path' WHERE conv_id = " +
                       std::to_string(base_ + 3) + " AND seq = 2");
  expectSameAsOneServer("SELECT conv_id, seq, content FROM msg WHERE conv_id IN (?, ?) AND content = ? ORDER BY seq",
                        [&](Params& p) { convs(p, {3, 12}).text(MYSQL_TYPE_VAR_STRING, "it's a \\ path"); });
  expectSameAsOneServer("SELECT COUNT(*) FROM msg WHERE conv_id IN (?, ?) AND content LIKE ?",
                        [&](Params& p) { convs(p, {3, 12}).longData(MYSQL_TYPE_BLOB, {"it's", " a %"}); });
}

TEST_F(PreparedScatter, RefusalsStayClear) {
  // A row query without any key on a table whose policy is `aggregates`.
  Stmt rows(proxy_.get(), "SELECT conv_id FROM msg WHERE sender_uid = ?");
  ASSERT_TRUE(rows.prepared()) << rows.error();
  Params p;
  p.num(MYSQL_TYPE_LONGLONG, uint64_t(1000), true);
  EXPECT_FALSE(rows.execute(p));
  EXPECT_EQ(rows.errNo(), 9101u) << rows.error();
  // The session goes on: the same statement with a key routes.
  Stmt keyed(proxy_.get(), "SELECT COUNT(*) FROM msg WHERE sender_uid = ?");
  ASSERT_TRUE(keyed.prepared()) << keyed.error();
  ASSERT_TRUE(keyed.execute(p)) << keyed.error();
  ASSERT_EQ(keyed.rows().size(), 1u);
  EXPECT_GE(std::stoull(keyed.rows()[0][0].value_or("0")), 13u);  // ours: 13 rows have sender 1000
}

}  // namespace
}  // namespace sp::drivers
