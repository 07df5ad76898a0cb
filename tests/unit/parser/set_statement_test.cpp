// setStatementBody(): where the statement of SET STATEMENT ... FOR starts.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "parser/set_statement.hpp"

namespace sp::parser {
namespace {

std::optional<std::string> body(std::string_view sql, const Dialect& d = {}) {
  auto offset = setStatementBody(sql, d);
  if (!offset) return std::nullopt;
  return std::string(sql.substr(*offset));
}

TEST(SetStatement, FindsTheStatementAfterFor) {
  EXPECT_EQ(body("SET STATEMENT max_statement_time = 5 FOR SELECT 1"), "SELECT 1");
  EXPECT_EQ(body("set statement sql_mode='ANSI_QUOTES' for  DELETE FROM msg"), "DELETE FROM msg");
  EXPECT_EQ(body("SET /* c */ STATEMENT a = 1, b = 'FOR' FOR\n/* x */ UPDATE t SET a = 1"), "UPDATE t SET a = 1");
  // FOR inside parentheses belongs to the value.
  EXPECT_EQ(body("SET STATEMENT a = (SELECT x FROM t FOR UPDATE) FOR SELECT 2"), "SELECT 2");
}

TEST(SetStatement, OtherStatementsAreNot) {
  EXPECT_EQ(body("SET sql_mode = 'ANSI'"), std::nullopt);
  EXPECT_EQ(body("SET @statement = 1"), std::nullopt);
  EXPECT_EQ(body("SELECT 1 FOR UPDATE"), std::nullopt);
  EXPECT_EQ(body("SET STATEMENT a = 1"), std::nullopt);      // no FOR: the server rejects it
  EXPECT_EQ(body("SET STATEMENT a = 1 FOR "), std::nullopt);  // nothing after FOR
  EXPECT_EQ(body("SET STATEMENT a = 'x FOR SELECT 1"), std::nullopt);  // unterminated string
}

TEST(SetStatement, ReadUnderTheSessionsDialect) {
  // A FOR inside a string is not the keyword; where the string ends depends on the mode.
  const std::string sql = "SET STATEMENT a = 'x\\' FOR SELECT 1 -- ' FOR SELECT 2";
  EXPECT_EQ(body(sql), "SELECT 2");
  EXPECT_EQ(body(sql, fromSqlMode("NO_BACKSLASH_ESCAPES")), "SELECT 1 -- ' FOR SELECT 2");
  // gbk: 0x95 0x5C is one character, the quote after it ends the string.
  Dialect gbk;
  gbk.charset = Charset::kGbk;
  const std::string mb = "SET STATEMENT a = '\x95\x5c' FOR SELECT 1 -- ' FOR SELECT 2";
  EXPECT_EQ(body(mb, gbk), "SELECT 1 -- ' FOR SELECT 2");
  EXPECT_EQ(body(mb), "SELECT 2");
}

}  // namespace
}  // namespace sp::parser
