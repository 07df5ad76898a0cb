// HAVING comparisons at the proxy follow MariaDB's coercions. Every
// expectation below was checked on mariadbd 10.11.19 (default sql_mode,
// utf8mb4_general_ci) with `SELECT MIN(col) <op> <literal> FROM t` over a
// column holding the value, e.g. a DATETIME(3) 2025-03-01 00:00:00.000.
#include <gtest/gtest.h>

#include <string>

#include "routing/merge/compare_coerce.hpp"
#include "routing/merge/merge.hpp"

namespace sp::routing {
namespace {

constexpr auto kStr = LiteralType::kString;
constexpr auto kNum = LiteralType::kExact;

int cmp(ValueClass cls, std::string_view value, LiteralType type, std::string_view literal) {
  return compareWithLiteral(cls, value, type, literal);
}

TEST(MergeCoerce, DatetimeAgainstStringsComparesInstants) {
  auto dt = ValueClass::kDatetime;
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kStr, "2025-03-01"), 0);
  EXPECT_GT(cmp(dt, "2025-09-16 22:17:50.577", kStr, "2025-09-16"), 0);
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kStr, "20250301"), 0);
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kStr, "2025-03-01T00:00"), 0);
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kStr, " 2025-03-01"), 0);
  EXPECT_LT(cmp(dt, "2025-03-01 00:00:00.000", kStr, "2025-03-01 00:00:00.0001"), 0);
  EXPECT_EQ(cmp(dt, "2025-02-28 23:59:59.999", kStr, "2025-02-28 23:59:59.9990"), 0);
  EXPECT_GT(cmp(dt, "2025-02-28 23:59:59.999", kStr, "2025-02-28 23:59:59.9985"), 0);
  EXPECT_LT(cmp(dt, "2025-02-28 23:59:59.999", kStr, "2025-02-28 23:59:59.9995"), 0);
  // Fuzzy dates: Feb 30 is a value after Feb 28.
  EXPECT_LT(cmp(dt, "2025-02-28 23:59:59.999", kStr, "2025-02-30"), 0);
  // What does not convert is the zero datetime.
  EXPECT_GT(cmp(dt, "2025-03-01 00:00:00.000", kStr, "2025-03"), 0);
  EXPECT_EQ(cmp(dt, "0000-00-00 00:00:00.000", kStr, "2025-03"), 0);
  EXPECT_EQ(cmp(dt, "0000-00-00 00:00:00.000", kStr, "garbage"), 0);
  EXPECT_EQ(cmp(dt, "0000-00-00 00:00:00.000", kStr, "2025-03-01 25:00"), 0);
  EXPECT_GT(cmp(dt, "2025-09-16 22:17:50.577", kStr, "garbage"), 0);
}

TEST(MergeCoerce, DatetimeAgainstNumbersConvertsTheNumber) {
  auto dt = ValueClass::kDatetime;
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kNum, "20250301"), 0);
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kNum, "20250301000000"), 0);
  EXPECT_EQ(cmp(dt, "2025-03-01 00:00:00.000", kNum, "20250301000000.000"), 0);
  EXPECT_GT(cmp(dt, "2025-09-16 22:17:50.577", kNum, "50"), 0);   // 50: zero datetime
  EXPECT_EQ(cmp(dt, "0000-00-00 00:00:00.000", kNum, "50"), 0);
  EXPECT_EQ(cmp(dt, "0000-00-00 00:00:00.000", kNum, "0"), 0);
  EXPECT_GT(cmp(dt, "2025-02-28 23:59:59.999", kNum, "1000"), 0);  // 2000-10-00
  EXPECT_GT(cmp(dt, "2025-02-28 23:59:59.999", kNum, "250228"), 0);
  EXPECT_EQ(temporal::datetimeFromNumber("250228"), temporal::datetimeFromString("2025-02-28"));
  EXPECT_EQ(temporal::datetimeFromNumber("991231"), temporal::datetimeFromString("1999-12-31"));
}

TEST(MergeCoerce, DateColumnComparesAsDatetime) {
  auto d = ValueClass::kDatetime;
  EXPECT_GT(cmp(d, "2025-09-16", kStr, "2025-09-15 23:59"), 0);
  EXPECT_EQ(cmp(d, "2025-09-16", kStr, "2025-09-16 00:00:00"), 0);
  EXPECT_EQ(cmp(d, "2025-09-16", kStr, "2025-9-16"), 0);
  EXPECT_LT(cmp(d, "2025-03-01", kStr, "2025-03-01 00:00:00.1"), 0);
  EXPECT_GT(cmp(d, "2025-09-16", kStr, "x"), 0);
  EXPECT_GT(cmp(d, "2025-09-16", kNum, "20250915"), 0);
  EXPECT_EQ(cmp(d, "2025-09-16", kNum, "20250916"), 0);
}

TEST(MergeCoerce, TextAgainstNumbersComparesAsDouble) {
  EXPECT_EQ(cmp(ValueClass::kText, "audio", kNum, "0"), 0);
  EXPECT_NE(cmp(ValueClass::kText, "12abc", kNum, "0"), 0);
  EXPECT_EQ(cmp(ValueClass::kText, "12abc", kNum, "12"), 0);
  EXPECT_LT(cmp(ValueClass::kText, "audio", kNum, "5"), 0);
  EXPECT_GT(cmp(ValueClass::kText, "audio", kStr, "1"), 0);       // string literal: collation order
  EXPECT_EQ(cmp(ValueClass::kText, "Audio", kStr, "AUDIO  "), 0);  // general_ci, PAD SPACE
  EXPECT_EQ(cmp(ValueClass::kBinary, "banana", kNum, "0"), 0);
  EXPECT_NE(cmp(ValueClass::kBinary, "Apple", kStr, "apple"), 0);
  EXPECT_LT(cmp(ValueClass::kBinary, "Apple", kStr, "B"), 0);
  EXPECT_EQ(stringToDouble("  -1.5e3xyz"), -1500);
  EXPECT_EQ(stringToDouble("0x1A"), 0);
  EXPECT_EQ(stringToDouble("inf"), 0);
  EXPECT_EQ(stringToDouble("7e"), 7);
}

TEST(MergeCoerce, NumbersAgainstStringsCompareAsDouble) {
  // Exact against a number literal: decimals; against a string: doubles.
  EXPECT_EQ(cmp(ValueClass::kExact, "12.00", kNum, "12.000"), 0);
  EXPECT_GT(cmp(ValueClass::kExact, "18446744073709551615", kNum, "18446744073709551614"), 0);
  EXPECT_EQ(cmp(ValueClass::kExact, "18446744073709551615", kStr, "18446744073709551614"), 0);  // both 2^64
  EXPECT_EQ(cmp(ValueClass::kExact, "18446744073709551620", kStr, "18446744073709551620"), 0);
  EXPECT_EQ(cmp(ValueClass::kExact, "12.00", kStr, "12"), 0);
  EXPECT_EQ(cmp(ValueClass::kExact, "5", kStr, "5 apples"), 0);
  EXPECT_EQ(cmp(ValueClass::kFloat, "1e20", kStr, "1e20"), 0);
  EXPECT_EQ(cmp(ValueClass::kFloat, "1e20", kNum, "100000000000000000000"), 0);
}

TEST(MergeCoerce, TimeComparesAsDuration) {
  auto t = ValueClass::kTime;
  EXPECT_LT(cmp(t, "-01:00:00", kStr, "00:00:00"), 0);
  EXPECT_GT(cmp(t, "100:00:00", kNum, "50"), 0);
  EXPECT_EQ(cmp(t, "100:00:00", kNum, "1000000"), 0);
  EXPECT_EQ(cmp(t, "26:00:00", kStr, "1 2:00:00"), 0);
}

TEST(MergeCoerce, TemporalOrderIsByValue) {
  std::optional<std::string_view> neg("-01:00:00"), small("00:30:00"), big("100:00:00"), mid("99:00:00");
  EXPECT_LT(compareValues(ValueClass::kTime, neg, small), 0);
  EXPECT_GT(compareValues(ValueClass::kTime, big, mid), 0);
  std::string a, b, c;
  appendSortKey(ValueClass::kTime, neg, false, a);
  appendSortKey(ValueClass::kTime, small, false, b);
  appendSortKey(ValueClass::kTime, big, false, c);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  std::optional<std::string_view> d1("2025-03-01 00:00:00.000"), d2("2025-03-01 00:00:00.001");
  std::string k1, k2;
  appendSortKey(ValueClass::kDatetime, d1, true, k1);
  appendSortKey(ValueClass::kDatetime, d2, true, k2);
  EXPECT_GT(k1, k2);  // descending
  EXPECT_EQ(groupKey(ValueClass::kDatetime, d1), groupKey(ValueClass::kDatetime, d1));
}

// HAVING on merged groups through the ResultMerger: MIN(created_at) >= '2025-03-01'
// keeps the group whose minimum is exactly midnight (text order would too, but
// '>' would not drop it: see the next expectation).
TEST(MergeCoerce, HavingOnMergedDatetimeUsesInstants) {
  protocol::ColumnDefinition41 c;
  c.name = "m";
  c.type = protocol::ColumnType::kDateTime;
  c.character_set = 63;
  c.decimals = 3;
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kMin, 0, 0, true, {}}};
  spec.having = {{0, HavingOp::kGt, "2025-03-01", LiteralType::kString}};
  ResultMerger merger(spec, 2);
  ASSERT_TRUE(merger.setColumns(0, {c}));
  ASSERT_TRUE(merger.setColumns(1, {c}));
  protocol::TextRow r0{std::string_view("2025-03-01 00:00:00.000")}, r1{std::string_view("2025-04-01 00:00:00.000")};
  ASSERT_TRUE(merger.pushRow(0, r0));
  ASSERT_TRUE(merger.pushRow(1, r1));
  merger.finishShard(0);
  merger.finishShard(1);
  EXPECT_FALSE(merger.nextRow().has_value());  // the minimum equals the literal: not '>'
  EXPECT_TRUE(merger.done());
}

}  // namespace
}  // namespace sp::routing
