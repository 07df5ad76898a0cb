// The logical catalog through prepared statements: ORMs and migration tools
// (GORM's HasTable, Go's database/sql without interpolateParams, PDO with
// native prepares) ask information_schema with bound parameters, and a
// prepared SHOW TABLES / DESCRIBE must answer like the text form. An
// application user sees logical tables (msg), never the physical ones
// (msg_00 .. msg_15), in both protocols.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "stmt_helpers.hpp"

namespace sp::drivers {
namespace {


bool names(const Rows& rows, const std::string& table) {
  return std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return !r.empty() && r[0] == table; });
}

class PreparedCatalog : public ::testing::Test {
 protected:
  void SetUp() override {
    bool ok = false;
    proxy_ = connectTo(kProxyPort, "app", "app_pw", "im", &ok);
    ASSERT_TRUE(ok) << "proxy on " << kProxyPort << ": " << mysql_error(proxy_.get());
  }
  // The rows of `sql` run as text through the proxy.
  Rows text(const std::string& sql) {
    std::string error;
    Rows out = textRows(proxy_.get(), sql, &error);
    EXPECT_EQ(error, "") << sql;
    return out;
  }
  Connection proxy_;
};

TEST_F(PreparedCatalog, InformationSchemaTablesWithBoundNames) {
  const std::string sql =
      "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name = ?";
  Stmt stmt(proxy_.get(), sql);
  ASSERT_TRUE(stmt.prepared()) << stmt.error();
  ASSERT_EQ(stmt.paramCount(), 2u);
  // The logical table exists (what GORM's HasTable asks before CREATE TABLE).
  Params logical;
  logical.text(MYSQL_TYPE_STRING, "im").text(MYSQL_TYPE_STRING, "msg");
  ASSERT_TRUE(stmt.execute(logical)) << stmt.errNo() << " " << stmt.error();
  ASSERT_EQ(stmt.rows().size(), 1u);
  EXPECT_EQ(stmt.rows()[0][0], "msg");
  // A physical table is hidden, as in the text form.
  Params physical;
  physical.text(MYSQL_TYPE_STRING, "im").text(MYSQL_TYPE_STRING, "msg_03");
  ASSERT_TRUE(stmt.execute(physical)) << stmt.errNo() << " " << stmt.error();
  EXPECT_TRUE(stmt.rows().empty()) << "msg_03 is visible to an application user";
  EXPECT_TRUE(text("SELECT table_name FROM information_schema.tables WHERE table_schema = 'im' "
                   "AND table_name = 'msg_03'").empty());
  // Re-executed with the logical name again: the same statement still answers.
  ASSERT_TRUE(stmt.execute(logical)) << stmt.errNo() << " " << stmt.error();
  EXPECT_EQ(stmt.rows().size(), 1u);
}

TEST_F(PreparedCatalog, EveryTableListedLikeTheTextForm) {
  const std::string sql =
      "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name";
  Stmt stmt(proxy_.get(), sql);
  ASSERT_TRUE(stmt.prepared()) << stmt.error();
  Params p;
  p.text(MYSQL_TYPE_VAR_STRING, "im");
  ASSERT_TRUE(stmt.execute(p)) << stmt.errNo() << " " << stmt.error();
  Rows want = text("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'im' "
                   "ORDER BY table_name");
  ASSERT_TRUE(names(want, "msg")) << "the text form lists no msg: the case tests nothing";
  EXPECT_EQ(stmt.rows(), want);
  EXPECT_FALSE(names(stmt.rows(), "msg_00"));
}

TEST_F(PreparedCatalog, ColumnsOfALogicalTable) {
  const std::string sql =
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() "
      "AND table_name = ? ORDER BY ordinal_position";
  Stmt stmt(proxy_.get(), sql);
  ASSERT_TRUE(stmt.prepared()) << stmt.error();
  Params p;
  p.text(MYSQL_TYPE_STRING, "msg");
  ASSERT_TRUE(stmt.execute(p)) << stmt.errNo() << " " << stmt.error();
  Rows want = text("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() "
                   "AND table_name = 'msg' ORDER BY ordinal_position");
  ASSERT_FALSE(want.empty()) << "the text form shows no column of msg";
  EXPECT_EQ(stmt.rows(), want);
}

TEST_F(PreparedCatalog, ShowTablesAndDescribe) {
  Stmt show(proxy_.get(), "SHOW TABLES");
  ASSERT_TRUE(show.prepared()) << show.error();
  ASSERT_TRUE(show.execute()) << show.errNo() << " " << show.error();
  EXPECT_TRUE(names(show.rows(), "msg"));
  EXPECT_FALSE(names(show.rows(), "msg_00"));
  EXPECT_EQ(show.rows().size(), text("SHOW TABLES").size());

  Stmt describe(proxy_.get(), "DESCRIBE msg");
  ASSERT_TRUE(describe.prepared()) << describe.error();
  ASSERT_TRUE(describe.execute()) << describe.errNo() << " " << describe.error();
  EXPECT_EQ(describe.rows(), text("DESCRIBE msg"));

  Stmt create(proxy_.get(), "SHOW CREATE TABLE msg");
  ASSERT_TRUE(create.prepared()) << create.error();
  ASSERT_TRUE(create.execute()) << create.errNo() << " " << create.error();
  ASSERT_EQ(create.rows().size(), 1u);
  EXPECT_EQ(create.rows()[0][0], "msg");
  EXPECT_EQ(create.rows(), text("SHOW CREATE TABLE msg"));
}

}  // namespace
}  // namespace sp::drivers
