#include "protocol/sql_literal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace sp::protocol {
namespace {

std::string lit(const BinaryValue& v, ColumnType type, bool is_unsigned = false, SqlLiteralOptions o = {}) {
  auto r = sqlLiteral(v, BinaryType{type, is_unsigned}, o);
  return r ? *r : "ERROR: " + r.error();
}

TEST(SqlLiteral, Integers) {
  EXPECT_EQ(lit(int64_t{42}, ColumnType::kLong), "42");
  EXPECT_EQ(lit(int64_t{-42}, ColumnType::kLongLong), "(-42)");
  EXPECT_EQ(lit(std::numeric_limits<int64_t>::min(), ColumnType::kLongLong), "(-9223372036854775808)");
  EXPECT_EQ(lit(uint64_t{18446744073709551615ull}, ColumnType::kLongLong, true), "18446744073709551615");
  EXPECT_EQ(lit(NullValue{}, ColumnType::kLong), "NULL");
}

TEST(SqlLiteral, DoublesAreExponentLiteralsThatRoundTrip) {
  for (double d : {0.1, -2.5, 1e300, 5e-324, 123456789.123456789, 0.0}) {
    std::string text = lit(d, ColumnType::kDouble);
    ASSERT_NE(text.find('e'), std::string::npos) << text;  // a DOUBLE literal, never a DECIMAL one
    std::string digits = text;
    if (digits.front() == '(') digits = digits.substr(1, digits.size() - 2);
    EXPECT_EQ(std::strtod(digits.c_str(), nullptr), d) << text;
  }
  EXPECT_EQ(lit(float(0.1f), ColumnType::kFloat).substr(0, 22), "1.00000001490116119e-0");
  EXPECT_TRUE(lit(std::nan(""), ColumnType::kDouble).starts_with("ERROR"));
  EXPECT_TRUE(lit(std::numeric_limits<float>::infinity(), ColumnType::kFloat).starts_with("ERROR"));
}

TEST(SqlLiteral, Decimals) {
  EXPECT_EQ(lit(std::string_view("12.50"), ColumnType::kNewDecimal), "12.50");
  EXPECT_EQ(lit(std::string_view("-0.5"), ColumnType::kNewDecimal), "(-0.5)");
  EXPECT_EQ(lit(std::string_view("18446744073709551615"), ColumnType::kDecimal), "18446744073709551615");
  EXPECT_TRUE(lit(std::string_view("1e5"), ColumnType::kNewDecimal).starts_with("ERROR"));
  EXPECT_TRUE(lit(std::string_view("1; DROP TABLE t"), ColumnType::kNewDecimal).starts_with("ERROR"));
  EXPECT_TRUE(lit(std::string_view(""), ColumnType::kNewDecimal).starts_with("ERROR"));
}

TEST(SqlLiteral, StringsAreQuotedAndEscaped) {
  EXPECT_EQ(lit(std::string_view("it's"), ColumnType::kVarString), "'it\\'s'");
  EXPECT_EQ(lit(std::string_view("a\\b"), ColumnType::kString), "'a\\\\b'");
  EXPECT_EQ(lit(std::string_view("a\0b", 3), ColumnType::kVarchar), "'a\\0b'");
  EXPECT_EQ(lit(std::string_view("\xF0\x9F\x98\x80"), ColumnType::kVarString), "'\xF0\x9F\x98\x80'");
  SqlLiteralOptions no_backslash{.backslash_escapes = false};
  EXPECT_EQ(lit(std::string_view("it's a\\b"), ColumnType::kVarString, false, no_backslash), "'it''s a\\b'");
}

TEST(SqlLiteral, BlobParametersAreBinaryStrings) {
  EXPECT_EQ(lit(std::string_view("\x00\xff'", 3), ColumnType::kBlob), "X'00FF27'");
  EXPECT_EQ(lit(std::string_view(""), ColumnType::kLongBlob), "X''");
}

TEST(SqlLiteral, DatesAndTimesAreTypedLiterals) {
  EXPECT_EQ(lit(BinaryDateTime{2026, 1, 5}, ColumnType::kDate), "DATE'2026-01-05'");
  EXPECT_EQ(lit(BinaryDateTime{2026, 1, 5, 10, 20, 30}, ColumnType::kDateTime), "TIMESTAMP'2026-01-05 10:20:30'");
  EXPECT_EQ(lit(BinaryDateTime{2026, 1, 5, 10, 20, 30, 1500}, ColumnType::kTimestamp),
            "TIMESTAMP'2026-01-05 10:20:30.001500'");
  EXPECT_EQ(lit(BinaryTime{true, 1, 2, 3, 4}, ColumnType::kTime), "TIME'-26:03:04'");
  EXPECT_TRUE(lit(LongDataValue{}, ColumnType::kBlob).starts_with("ERROR"));
}

TEST(SqlLiteral, CharsetsWhereByteEscapingIsUnsafe) {
  EXPECT_TRUE(quotingUnsafeCharset("gbk"));
  EXPECT_TRUE(quotingUnsafeCharset("SJIS"));
  EXPECT_FALSE(quotingUnsafeCharset("utf8mb4"));
  EXPECT_FALSE(quotingUnsafeCharset("latin1"));
}

}  // namespace
}  // namespace sp::protocol
