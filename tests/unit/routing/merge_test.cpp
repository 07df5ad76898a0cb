// ResultMerger operators on text fixtures: rows as MariaDB prints them,
// expectations checked against a real MariaDB 10.11 where noted.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "routing/merge/decimal.hpp"
#include "routing/merge/merge.hpp"

namespace sp::routing {
namespace {

using protocol::ColumnDefinition41;
using protocol::ColumnType;
using Fixture = std::vector<std::vector<std::optional<std::string>>>;

constexpr uint16_t kGeneralCi = 45;  // utf8mb4_general_ci
constexpr uint16_t kBinary = 63;

ColumnDefinition41 col(std::string name, ColumnType type, uint16_t charset = kBinary, uint8_t decimals = 0,
                       uint32_t length = 11) {
  ColumnDefinition41 c;
  c.name = std::move(name);
  c.type = type;
  c.character_set = charset;
  c.decimals = decimals;
  c.column_length = length;
  return c;
}

std::string render(const MergedRow& row) {
  std::string out;
  for (size_t i = 0; i < row.size(); ++i) out += (i ? "|" : "") + (row[i] ? *row[i] : std::string("NULL"));
  return out;
}

// Feeds every shard's rows round-robin (one row per shard per turn), pulling
// output as it becomes ready, then finishes the shards.
std::vector<std::string> run(const MergeSpec& spec, const std::vector<ColumnDefinition41>& columns,
                             const std::vector<Fixture>& shards, ResultMerger* keep = nullptr) {
  ResultMerger local(spec, shards.size());
  ResultMerger& merger = keep ? *keep : local;
  for (size_t s = 0; s < shards.size(); ++s) EXPECT_TRUE(merger.setColumns(s, columns).has_value());
  std::vector<std::string> out;
  auto drain = [&] {
    while (auto row = merger.nextRow()) out.push_back(render(*row));
  };
  std::vector<size_t> next(shards.size(), 0);
  std::vector<bool> finished(shards.size(), false);
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t s = 0; s < shards.size(); ++s) {
      if (finished[s]) continue;
      if (next[s] < shards[s].size()) {
        protocol::TextRow row;
        for (const auto& v : shards[s][next[s]]) row.push_back(v ? std::optional<std::string_view>(*v) : std::nullopt);
        EXPECT_TRUE(merger.pushRow(s, row).has_value());
        ++next[s];
      } else {
        merger.finishShard(s);
        finished[s] = true;
      }
      progress = true;
      drain();
    }
  }
  drain();
  EXPECT_TRUE(merger.done());
  return out;
}

MergeSpec rowSpec(size_t columns, std::vector<MergeSortKey> order = {}) {
  MergeSpec spec;
  for (uint32_t i = 0; i < columns; ++i) spec.columns.push_back({MergeOp::kValue, i, 0, true, {}});
  spec.order_by = std::move(order);
  return spec;
}

TEST(Decimal, AddIsExactWithManyDigits) {
  EXPECT_EQ(*decimal::add("99999999999999999999999999999999.99", "0.01"), "100000000000000000000000000000000.00");
  EXPECT_EQ(*decimal::add("1.5", "2"), "3.5");
  EXPECT_EQ(*decimal::add("-1.25", "1.25"), "0.00");
  EXPECT_EQ(*decimal::add("-10", "3.5"), "-6.5");
  EXPECT_EQ(*decimal::add("18446744073709551615", "18446744073709551615"), "36893488147419103230");
  EXPECT_FALSE(decimal::add("abc", "1").has_value());
}

TEST(Decimal, CompareNumerically) {
  EXPECT_LT(decimal::compare("9.75", "10.5"), 0);
  EXPECT_GT(decimal::compare("-1", "-2"), 0);
  EXPECT_EQ(decimal::compare("1.50", "1.5"), 0);
  EXPECT_EQ(decimal::compare("-0.00", "0"), 0);
  EXPECT_LT(decimal::compare("-0.5", "0"), 0);
}

TEST(Decimal, DivideRoundsHalfAwayFromZero) {
  EXPECT_EQ(*decimal::divide("2", 3, 4), "0.6667");
  EXPECT_EQ(*decimal::divide("1", 3, 4), "0.3333");
  EXPECT_EQ(*decimal::divide("-2", 3, 4), "-0.6667");
  EXPECT_EQ(*decimal::divide("11.25", 6, 6), "1.875000");  // MariaDB: AVG(d) of that table
  EXPECT_EQ(*decimal::divide("36", 6, 4), "6.0000");
  EXPECT_EQ(*decimal::divide("1", 8, 2), "0.13");
  EXPECT_EQ(*decimal::divide("0", 5, 4), "0.0000");
}

TEST(MergeConcatenate, KeepsArrivalOrderAndSkipsEmptyShards) {
  auto cols = std::vector{col("id", ColumnType::kLong)};
  auto out = run(rowSpec(1), cols, {{{"1"}, {"2"}}, {}, {{"3"}}});
  EXPECT_EQ(out, (std::vector<std::string>{"1", "3", "2"}));
}

TEST(MergeSort, NumericTiesAndNullsFirst) {
  auto cols = std::vector{col("seq", ColumnType::kLongLong), col("who", ColumnType::kVarString, kGeneralCi)};
  auto out = run(rowSpec(2, {{0, false}}), cols,
                 {{{std::nullopt, "a"}, {"2", "a"}, {"10", "a"}}, {{"2", "b"}, {"9", "b"}}, {{std::nullopt, "c"}}});
  // Ties keep the lower shard first; NULL sorts first in ASC.
  EXPECT_EQ(out, (std::vector<std::string>{"NULL|a", "NULL|c", "2|a", "2|b", "9|b", "10|a"}));
}

TEST(MergeSort, DescendingDecimalsAndNullsLast) {
  auto cols = std::vector{col("d", ColumnType::kNewDecimal, kBinary, 2)};
  auto out = run(rowSpec(1, {{0, true}}), cols, {{{"10.50"}, {"-3.25"}, {std::nullopt}}, {{"9.75"}, {"-3.20"}}});
  EXPECT_EQ(out, (std::vector<std::string>{"10.50", "9.75", "-3.20", "-3.25", "NULL"}));
}

TEST(MergeSort, GeneralCiIgnoresCaseAndTrailingSpaces) {
  // MariaDB, utf8mb4_general_ci: ORDER BY name gives a, B, b  (B and 'b ' tie).
  auto ci = std::vector{col("name", ColumnType::kVarString, kGeneralCi)};
  auto out = run(rowSpec(1, {{0, false}}), ci, {{{"B"}, {"c"}}, {{"a"}, {"b "}}});
  EXPECT_EQ(out, (std::vector<std::string>{"a", "B", "b ", "c"}));
  auto bin = std::vector{col("name", ColumnType::kVarString, 46)};  // utf8mb4_bin: bytes
  out = run(rowSpec(1, {{0, false}}), bin, {{{"B"}, {"c"}}, {{"a"}, {"b "}}});
  EXPECT_EQ(out, (std::vector<std::string>{"B", "a", "b ", "c"}));
}

TEST(MergeSort, NeedsTheShardWithoutABufferedRow) {
  auto cols = std::vector{col("seq", ColumnType::kLong)};
  ResultMerger m(rowSpec(1, {{0, false}}), 2);
  ASSERT_TRUE(m.setColumns(0, cols));
  ASSERT_TRUE(m.setColumns(1, cols));
  EXPECT_EQ(m.needsRowFrom(), 0u);
  ASSERT_TRUE(m.pushRow(0, {std::string_view("5")}));
  EXPECT_EQ(m.needsRowFrom(), 1u);
  EXPECT_FALSE(m.nextRow());
  ASSERT_TRUE(m.pushRow(1, {std::string_view("7")}));
  EXPECT_EQ(render(*m.nextRow()), "5");
  EXPECT_EQ(m.needsRowFrom(), 0u);
  m.finishShard(0);
  EXPECT_EQ(render(*m.nextRow()), "7");
  EXPECT_FALSE(m.done());
  m.finishShard(1);
  EXPECT_TRUE(m.done());
}

TEST(MergeLimit, OffsetAndEarlyStop) {
  auto cols = std::vector{col("seq", ColumnType::kLong)};
  MergeSpec spec = rowSpec(1, {{0, false}});
  spec.limit = 2;
  spec.offset = 3;
  ResultMerger m(spec, 2);
  auto out = run(spec, cols, {{{"1"}, {"3"}, {"5"}, {"7"}}, {{"2"}, {"4"}, {"6"}, {"8"}}}, &m);
  EXPECT_EQ(out, (std::vector<std::string>{"4", "5"}));
  EXPECT_FALSE(m.wantsMoreInput());
}

TEST(MergeLimit, HugeOffsetAndLimitZero) {
  auto cols = std::vector{col("seq", ColumnType::kLong)};
  MergeSpec spec = rowSpec(1);
  spec.offset = 1000000000000000000ull;
  spec.limit = 18446744073709551615ull;
  EXPECT_TRUE(run(spec, cols, {{{"1"}}, {{"2"}}}).empty());
  spec.offset = 0;
  spec.limit = 0;
  ResultMerger m(spec, 2);
  EXPECT_TRUE(run(spec, cols, {{{"1"}}, {{"2"}}}, &m).empty());
  EXPECT_FALSE(m.wantsMoreInput());
}

TEST(MergeDistinct, DropsDuplicatesAcrossShardsUnderCollation) {
  auto cols = std::vector{col("kind", ColumnType::kVarString, kGeneralCi)};
  MergeSpec spec = rowSpec(1, {{0, false}});
  spec.distinct = true;
  auto out = run(spec, cols, {{{"a"}, {"x"}}, {{"A"}, {"b"}, {"x"}}, {{std::nullopt}}});
  EXPECT_EQ(out, (std::vector<std::string>{"NULL", "a", "b", "x"}));
}

TEST(MergeProject, StarWithHelperColumns) {
  auto cols = std::vector{col("id", ColumnType::kLong), col("seq", ColumnType::kLong), col("seq", ColumnType::kLong)};
  MergeSpec spec;
  spec.helper_columns = 1;
  spec.order_by = {{MergeSpec::kFromEnd, true}};
  ResultMerger m(spec, 2);
  auto out = run(spec, cols, {{{"1", "9", "9"}, {"2", "1", "1"}}, {{"3", "5", "5"}}}, &m);
  EXPECT_EQ(out, (std::vector<std::string>{"1|9", "3|5", "2|1"}));
  ASSERT_EQ(m.outputColumns().size(), 2u);
  EXPECT_EQ(m.outputColumns()[1].name, "seq");
}

TEST(MergeColumns, ShardsMustAgree) {
  ResultMerger m(rowSpec(1), 2);
  ASSERT_TRUE(m.setColumns(0, {col("a", ColumnType::kLong)}));
  EXPECT_FALSE(m.setColumns(1, {col("a", ColumnType::kLong), col("b", ColumnType::kLong)}));
  ResultMerger twice(rowSpec(1), 2);
  ASSERT_TRUE(twice.setColumns(0, {col("a", ColumnType::kLong)}));
  EXPECT_FALSE(twice.setColumns(0, {col("a", ColumnType::kLong)}));
}

// SELECT COUNT(*), SUM(len), MIN(len), MAX(len), AVG(len) -> shards: COUNT(*), SUM, MIN, MAX, SUM(len), COUNT(len)
MergeSpec wholeTableSpec() {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kCount, 0, 0, true, {}}, {MergeOp::kSum, 1, 0, true, {}}, {MergeOp::kMin, 2, 0, true, {}},
                  {MergeOp::kMax, 3, 0, true, {}},   {MergeOp::kAvg, 4, 5, true, "AVG(len)"},
                  {MergeOp::kCount, 5, 0, false, {}}};
  return spec;
}

std::vector<ColumnDefinition41> wholeTableColumns() {
  return {col("COUNT(*)", ColumnType::kLongLong, kBinary, 0, 21), col("SUM(len)", ColumnType::kNewDecimal, kBinary, 0, 33),
          col("MIN(len)", ColumnType::kLong),  col("MAX(len)", ColumnType::kLong),
          col("SUM(len)", ColumnType::kNewDecimal, kBinary, 0, 33), col("COUNT(len)", ColumnType::kLongLong, kBinary, 0, 21)};
}

TEST(MergeAggregate, MergesPartialsExactly) {
  auto out = run(wholeTableSpec(), wholeTableColumns(),
                 {{{"2", "12", "5", "7", "12", "2"}}, {{"1", std::nullopt, std::nullopt, std::nullopt, std::nullopt, "0"}},
                  {{"3", "8", "-1", "10", "8", "2"}}});
  // len values 5, 7, NULL, -1, 9, NULL: COUNT(*) 6, SUM 20, AVG 20/4.
  EXPECT_EQ(out, (std::vector<std::string>{"6|20|-1|10|5.0000"}));
}

TEST(MergeAggregate, EmptySetGivesOneRow) {
  auto out = run(wholeTableSpec(), wholeTableColumns(),
                 {{{"0", std::nullopt, std::nullopt, std::nullopt, std::nullopt, "0"}}, {}});
  EXPECT_EQ(out, (std::vector<std::string>{"0|NULL|NULL|NULL|NULL"}));
  out = run(wholeTableSpec(), wholeTableColumns(), {{}, {}});  // shards grouped away every row
  EXPECT_EQ(out, (std::vector<std::string>{"0|NULL|NULL|NULL|NULL"}));
}

TEST(MergeAggregate, AvgMetadataAndScaleLikeMariaDb) {
  ResultMerger m(wholeTableSpec(), 1);
  ASSERT_TRUE(m.setColumns(0, wholeTableColumns()));
  const auto& out = m.outputColumns();
  ASSERT_EQ(out.size(), 5u);
  // MariaDB 10.11, AVG(int column): NEWDECIMAL, length 16, decimals 4.
  EXPECT_EQ(out[4].name, "AVG(len)");
  EXPECT_EQ(out[4].type, ColumnType::kNewDecimal);
  EXPECT_EQ(out[4].column_length, 16u);
  EXPECT_EQ(out[4].decimals, 4);
  EXPECT_EQ(out[0].type, ColumnType::kLongLong);
  // AVG(decimal(10,2)): SUM is length 34 decimals 2 -> AVG length 16 decimals 6.
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kAvg, 0, 1, true, "AVG(d)"}, {MergeOp::kCount, 1, 0, false, {}}};
  ResultMerger d(spec, 2);
  std::vector<ColumnDefinition41> cols = {col("SUM(d)", ColumnType::kNewDecimal, kBinary, 2, 34),
                                          col("COUNT(d)", ColumnType::kLongLong, kBinary, 0, 21)};
  auto rows = run(spec, cols, {{{"3.75", "3"}}, {{"7.50", "3"}}}, &d);
  EXPECT_EQ(d.outputColumns()[0].column_length, 16u);
  EXPECT_EQ(d.outputColumns()[0].decimals, 6);
  EXPECT_EQ(rows, (std::vector<std::string>{"1.875000"}));  // MariaDB: AVG(d) = 1.875000
}

TEST(MergeAggregate, DecimalSumWithManyDigits) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kSum, 0, 0, true, {}}};
  auto cols = std::vector{col("SUM(d)", ColumnType::kNewDecimal, kBinary, 2, 67)};
  auto out = run(spec, cols, {{{"99999999999999999999999999999999999999999999999999999999999999.99"}}, {{"0.01"}},
                              {{"-0.005"}}});
  EXPECT_EQ(out, (std::vector<std::string>{"99999999999999999999999999999999999999999999999999999999999999.995"}));
}

// SELECT name, COUNT(*) AS n, SUM(len) FROM t GROUP BY name HAVING n > 1 ORDER BY SUM(len) DESC LIMIT 2
TEST(MergeAggregate, GroupsHavingOrderLimitWithNullGroup) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}, {MergeOp::kCount, 1, 0, true, {}}, {MergeOp::kSum, 2, 0, true, {}}};
  spec.group_by = {0};
  spec.having = {{1, HavingOp::kGt, "1"}};
  spec.order_by = {{2, true}};
  spec.limit = 2;
  auto cols = std::vector{col("name", ColumnType::kVarString, kGeneralCi), col("n", ColumnType::kLongLong),
                          col("SUM(len)", ColumnType::kNewDecimal)};
  auto out = run(spec, cols,
                 {{{std::nullopt, "1", "4"}, {"a", "1", "1"}, {"b", "5", "100"}},
                  {{std::nullopt, "2", "3"}, {"A", "1", "2"}, {"c", "1", "1000"}}});
  // Groups: NULL (3, 7), a/A (2, 3), b (5, 100), c (1, 1000: dropped by HAVING).
  EXPECT_EQ(out, (std::vector<std::string>{"b|5|100", "NULL|3|7"}));
}

TEST(MergeAggregate, GroupOrderWithoutOrderByIsGroupKeyOrder) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}, {MergeOp::kCount, 1, 0, true, {}}};
  spec.group_by = {0};
  auto cols = std::vector{col("user_id", ColumnType::kLong), col("COUNT(*)", ColumnType::kLongLong)};
  auto out = run(spec, cols, {{{"10", "1"}, {"9", "2"}}, {{std::nullopt, "1"}, {"10", "4"}, {"100", "1"}}});
  EXPECT_EQ(out, (std::vector<std::string>{"NULL|1", "9|2", "10|5", "100|1"}));
}

// SELECT COUNT(DISTINCT user_id), SUM(DISTINCT user_id), COUNT(*) -> shards GROUP BY user_id
TEST(MergeAggregate, CountAndSumDistinctFinishedAtTheProxy) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kCountDistinct, 0, 3, true, {}}, {MergeOp::kSumDistinct, 1, 3, true, {}},
                  {MergeOp::kCount, 2, 0, true, {}}, {MergeOp::kValue, 3, 0, false, {}}};
  auto cols = std::vector{col("COUNT(DISTINCT user_id)", ColumnType::kLongLong), col("SUM(DISTINCT user_id)", ColumnType::kNewDecimal),
                          col("COUNT(*)", ColumnType::kLongLong), col("user_id", ColumnType::kLong)};
  auto out = run(spec, cols,
                 {{{"0", std::nullopt, "2", std::nullopt}, {"1", "5", "1", "5"}, {"1", "7", "3", "7"}},
                  {{"1", "5", "4", "5"}, {"1", "11", "1", "11"}}, {}});
  EXPECT_EQ(out, (std::vector<std::string>{"3|23|11"}));
}

TEST(MergeAggregate, MinMaxUnderCollationAndFloatSums) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kMin, 0, 0, true, {}}, {MergeOp::kMax, 1, 0, true, {}}, {MergeOp::kSum, 2, 0, true, {}}};
  auto cols = std::vector{col("MIN(name)", ColumnType::kVarString, kGeneralCi),
                          col("MAX(name)", ColumnType::kVarString, kGeneralCi),
                          col("SUM(f)", ColumnType::kDouble, kBinary, 31, 23)};
  auto out = run(spec, cols, {{{"b", "b", "0.1"}}, {{"A", "C", "0.2"}}, {{"a", "c ", std::nullopt}}});
  // MariaDB: SUM(f) of 0.1 and 0.2 prints 0.30000000000000004.
  EXPECT_EQ(out, (std::vector<std::string>{"A|C|0.30000000000000004"}));
}

TEST(MergeSpecDescribe, ReadsLikeThePipeline) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}, {MergeOp::kCount, 1, 0, true, {}}, {MergeOp::kAvg, 2, 3, true, {}},
                  {MergeOp::kCount, 3, 0, false, {}}};
  spec.group_by = {0};
  spec.order_by = {{1, true}};
  spec.limit = 10;
  EXPECT_EQ(spec.describe(), "Aggregate(group by 1; count, avg, count) -> OrderBy(2 desc) -> Limit(10) -> Project(drop 1 helper)");
}

}  // namespace
}  // namespace sp::routing

namespace sp::routing {
namespace {

// The merge sort compares memcmp keys: they must order exactly like compareValues.
TEST(MergeSortKey, AgreesWithCompareValues) {
  std::vector<std::optional<std::string>> numbers = {std::nullopt, "0", "-0.00", "1", "-1", "10", "9.99", "-10.5",
                                                     "-10.25", "0.001", "123456789012345678901234567890", "-0.5", "2.50", "2.5"};
  std::vector<std::optional<std::string>> texts = {std::nullopt, "a", "A", "a ", "B", "b", "épée", "epee", "Zed", "",
                                                   std::string("a\0b", 3), "ab"};
  auto check = [](ValueClass cls, const std::vector<std::optional<std::string>>& values) {
    for (const auto& x : values) {
      for (const auto& y : values) {
        std::optional<std::string_view> a, b;
        if (x) a = *x;
        if (y) b = *y;
        for (bool desc : {false, true}) {
          std::string ka, kb;
          appendSortKey(cls, a, desc, ka);
          appendSortKey(cls, b, desc, kb);
          int want = compareValues(cls, a, b) * (desc ? -1 : 1);
          int got = ka < kb ? -1 : ka > kb ? 1 : 0;
          EXPECT_EQ(got, want) << (x ? *x : "NULL") << " vs " << (y ? *y : "NULL") << (desc ? " desc" : "");
        }
      }
    }
  };
  check(ValueClass::kExact, numbers);
  check(ValueClass::kText, texts);
  check(ValueClass::kBinary, texts);
  check(ValueClass::kFloat, {std::nullopt, "0.1", "-0.1", "1e10", "-1e-5", "0", "3.25"});
}

}  // namespace
}  // namespace sp::routing

namespace sp::routing {
namespace {

TEST(MergeAggregate, SurvivesBeingMovedMidQuery) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}, {MergeOp::kCount, 1, 0, true, {}}};
  spec.group_by = {0};
  auto cols = std::vector{col("k", ColumnType::kLong), col("COUNT(*)", ColumnType::kLongLong)};
  auto first = std::make_unique<ResultMerger>(spec, 1);
  ASSERT_TRUE(first->setColumns(0, cols));
  ASSERT_TRUE(first->pushRow(0, {std::string_view("1"), std::string_view("2")}));
  ResultMerger moved = std::move(*first);
  first.reset();
  ASSERT_TRUE(moved.pushRow(0, {std::string_view("1"), std::string_view("3")}));
  moved.finishShard(0);
  EXPECT_EQ(render(*moved.nextRow()), "1|5");
  EXPECT_TRUE(moved.done());
}

}  // namespace
}  // namespace sp::routing
