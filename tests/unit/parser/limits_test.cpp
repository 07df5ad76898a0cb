// Hostile statements (issue 12): budgets on nodes, depth and IN lists give a
// kTooComplex error instead of a crash, and whatever the tree's depth it is
// destroyed without recursion.
#include <gtest/gtest.h>

#include <string>

#include "parser/ast_depth.hpp"
#include "parser/parse.hpp"

namespace sp::parser {
namespace {

std::string repeat(std::string_view piece, size_t n) {
  std::string out;
  out.reserve(piece.size() * n);
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

// "SELECT conv_id FROM msg WHERE conv_id = 5 AND 1 AND 1 ..." with `terms` ANDed terms.
std::string andChain(size_t terms) {
  return "SELECT conv_id FROM msg WHERE conv_id = 5" + repeat(" AND 1", terms - 1);
}

void expectTooComplex(const ParseResult& r, std::string_view words) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ParseErrorKind::kTooComplex) << r.error().message;
  EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
}

TEST(ParseLimits, MillionTermAndChainIsRefusedByTheNodeBudget) {
  const std::string sql = andChain(1'000'000);  // about 6 MB
  expectTooComplex(parse(sql), "expression nodes");
}

TEST(ParseLimits, ChainDeeperThanTheDepthBudgetIsRefused) {
  ParseLimits limits;
  limits.max_depth = 1000;
  expectTooComplex(parse(andChain(2000), limits), "nested");
  auto ok = parse(andChain(900), limits);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_LE(astDepth(*ok), 1000u);
}

TEST(ParseLimits, DefaultDepthBudgetAdmitsLongOrLists) {
  // An ORM's `id = 1 OR id = 2 OR ...` of 1,000 terms stays well inside.
  std::string sql = "SELECT * FROM msg WHERE conv_id = 0";
  for (int i = 1; i < 1000; ++i) sql += " OR conv_id = " + std::to_string(i);
  EXPECT_TRUE(parse(sql).has_value());
}

TEST(ParseLimits, MillionDeepTreeIsDestroyedWithoutRecursion) {
  // Budgets lifted: a left-deep chain a million levels deep is built, then
  // destroyed; a recursive destructor would overflow the 8 MiB stack here.
  ParseLimits unlimited{100'000'000, 100'000'000, 100'000'000};
  auto r = parse(andChain(1'000'000), unlimited);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_GE(astDepth(*r), 1'000'000u);
}

TEST(ParseLimits, DeepParenthesesAreRefused) {
  const std::string sql = "SELECT " + repeat("(", 100'000) + "1" + repeat(")", 100'000);
  expectTooComplex(parse(sql), "nesting too deep");
}

TEST(ParseLimits, DeepNotChainIsRefused) {
  expectTooComplex(parse("SELECT * FROM msg WHERE " + repeat("NOT ", 1'000'000) + "1"), "nesting too deep");
  expectTooComplex(parse("SELECT " + repeat("- ", 1'000'000) + "1"), "nesting too deep");
}

TEST(ParseLimits, LongInListIsRefused) {
  std::string sql = "SELECT * FROM msg WHERE conv_id IN (0";
  for (int i = 1; i < 200'000; ++i) sql += "," + std::to_string(i);
  sql += ")";
  expectTooComplex(parse(sql), "values in an IN list");
  ParseLimits generous;
  generous.max_in_values = 300'000;
  EXPECT_TRUE(parse(sql, generous).has_value());
}

TEST(ParseLimits, PostfixChainsWithoutNewOperandsAreBounded) {
  expectTooComplex(parse("SELECT 1" + repeat(" IS NULL", 1'000'000)), "statement too complex");
  expectTooComplex(parse("SELECT 'a'" + repeat(" COLLATE utf8mb4_bin", 600'000)), "statement too complex");
}

TEST(ParseLimits, LongJoinChainIsRefused) {
  std::string sql = "SELECT * FROM t0";
  for (int i = 1; i < 10'000; ++i) sql += " JOIN t" + std::to_string(i) + " ON 1";
  expectTooComplex(parse(sql), "nested");
}

TEST(ParseLimits, TokensAreCappedBeforeParsing) {
  // 10 million IN values (about 20 MB): refused by the token cap, long
  // before the IN-list budget, so the tokens are never all held.
  std::string sql = "SELECT * FROM msg WHERE conv_id IN (1" + repeat(",1", 10'000'000) + ")";
  expectTooComplex(parse(sql), "tokens");
}

TEST(ParseLimits, SyntaxErrorsKeepTheirKind) {
  auto r = parse("SELECT FROM");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ParseErrorKind::kSyntax);
}

}  // namespace
}  // namespace sp::parser
