#include "parser/placeholders.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sp::parser {
namespace {

TEST(Placeholders, ReplacedInOrderWithSpaces) {
  std::vector<std::string> literals = {"7", "'a'", "50"};
  auto out = substitutePlaceholders("SELECT * FROM msg WHERE conv_id=? AND body=?ORDER BY seq LIMIT?", literals);
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(*out, "SELECT * FROM msg WHERE conv_id= 7  AND body= 'a' ORDER BY seq LIMIT 50 ");
}

TEST(Placeholders, QuestionMarksInStringsCommentsAndIdentifiersStay) {
  std::vector<std::string> literals = {"1"};
  auto out = substitutePlaceholders("SELECT '?', `a?` /* ? */ FROM t -- ?\nWHERE x = ?", literals);
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(*out, "SELECT '?', `a?` /* ? */ FROM t -- ?\nWHERE x =  1 ");
}

TEST(Placeholders, VersionCommentContentIsSql) {
  std::vector<std::string> literals = {"3"};
  auto out = substitutePlaceholders("SELECT /*!100000 ? */ 1", literals);
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(*out, "SELECT /*!100000  3  */ 1");
}

TEST(Placeholders, CountMismatchIsAnError) {
  std::vector<std::string> one = {"1"};
  std::vector<std::string> three = {"1", "2", "3"};
  EXPECT_FALSE(substitutePlaceholders("SELECT ?, ?", one).has_value());
  EXPECT_FALSE(substitutePlaceholders("SELECT ?, ?", three).has_value());
  std::vector<std::string> none;
  auto out = substitutePlaceholders("SELECT 1", none);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, "SELECT 1");
}

TEST(Placeholders, UnterminatedStringIsAnError) {
  std::vector<std::string> one = {"1"};
  auto out = substitutePlaceholders("SELECT ? FROM t WHERE a = 'x", one);
  EXPECT_FALSE(out.has_value());
}

}  // namespace
}  // namespace sp::parser
