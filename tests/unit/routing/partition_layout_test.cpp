// Month partitions read from information_schema rows, the months upkeep must
// add, and the REORGANIZE statement that adds them.
#include <gtest/gtest.h>

#include "routing/map/partition_layout.hpp"

namespace sp::routing {
namespace {

MonthIndex layoutMonth(int year, int month) { return monthIndexOf({year, month, 1}); }

std::vector<PartitionRow> seedRows() {
  // The seed's table: p202501, p202502, pmax.
  return {{"p202501", "'2025-02-01'", 10, 16384, 32768},
          {"p202502", "'2025-03-01'", 0, 16384, 0},
          {"pmax", "MAXVALUE", 3, 16384, 0}};
}

TEST(PartitionLayout, ReadsMonthsAndMaxvalue) {
  auto layout = readPartitionLayout(seedRows());
  ASSERT_TRUE(layout) << layout.error();
  ASSERT_EQ(layout->partitions.size(), 3u);
  EXPECT_FALSE(layout->partitions[0].first);  // the first partition is unbounded below
  EXPECT_EQ(layout->partitions[0].last, layoutMonth(2025, 1));
  EXPECT_EQ(layout->partitions[1].first, layoutMonth(2025, 2));
  EXPECT_EQ(layout->partitions[1].last, layoutMonth(2025, 2));
  ASSERT_NE(layout->maxvalue(), nullptr);
  EXPECT_EQ(layout->maxvalue()->row.name, "pmax");
  EXPECT_EQ(layout->maxvalue()->first, layoutMonth(2025, 3));
  EXPECT_EQ(layout->covered_until, layoutMonth(2025, 3));
}

TEST(PartitionLayout, RefusesTablesThatAreNotMonthPartitioned) {
  EXPECT_FALSE(readPartitionLayout({}));
  EXPECT_FALSE(readPartitionLayout({{"", "", 5, 0, 0}}));                                   // unpartitioned
  EXPECT_FALSE(readPartitionLayout({{"p1", "'2025-02-01'", 0, 0, 0}}));                     // no pmax
  EXPECT_FALSE(readPartitionLayout({{"p1", "'2025-02-15'", 0, 0, 0}, {"pmax", "MAXVALUE", 0, 0, 0}}));  // mid-month
  EXPECT_FALSE(readPartitionLayout({{"p1", "100", 0, 0, 0}, {"pmax", "MAXVALUE", 0, 0, 0}}));           // integer bound
  EXPECT_FALSE(readPartitionLayout({{"pmax", "MAXVALUE", 0, 0, 0}, {"p1", "'2025-02-01'", 0, 0, 0}}));
}

TEST(PartitionLayout, MissingMonthsAreTheUncoveredOnesFromNowToAhead) {
  auto layout = readPartitionLayout(seedRows());
  ASSERT_TRUE(layout);
  EXPECT_TRUE(missingMonths(*layout, layoutMonth(2025, 1), 1).empty());  // Jan and Feb exist
  EXPECT_EQ(missingMonths(*layout, layoutMonth(2025, 2), 1), (std::vector<MonthIndex>{layoutMonth(2025, 3)}));
  EXPECT_EQ(missingMonths(*layout, layoutMonth(2025, 6), 2),
            (std::vector<MonthIndex>{layoutMonth(2025, 6), layoutMonth(2025, 7), layoutMonth(2025, 8)}));
}

TEST(PartitionLayout, ReorganizeAddsEveryMonthFromTheLastBoundToAhead) {
  auto layout = readPartitionLayout(seedRows());
  ASSERT_TRUE(layout);
  EXPECT_EQ(reorganizeStatement("t_s00", *layout, layoutMonth(2025, 2), 2),
            "ALTER TABLE `t_s00` REORGANIZE PARTITION `pmax` INTO ("
            "PARTITION `p202503` VALUES LESS THAN ('2025-04-01'), "
            "PARTITION `p202504` VALUES LESS THAN ('2025-05-01'), "
            "PARTITION `pmax` VALUES LESS THAN (MAXVALUE))");
  // Idempotent: nothing when the months exist.
  EXPECT_EQ(reorganizeStatement("t_s00", *layout, layoutMonth(2025, 1), 1), "");
  // Behind by months: the past months are added too (their rows leave pmax); across a year end.
  auto sql = reorganizeStatement("t_s00", *layout, layoutMonth(2025, 12), 1);
  EXPECT_NE(sql.find("`p202503` VALUES LESS THAN ('2025-04-01')"), std::string::npos) << sql;
  EXPECT_NE(sql.find("`p202512` VALUES LESS THAN ('2026-01-01')"), std::string::npos) << sql;
  EXPECT_NE(sql.find("`p202601` VALUES LESS THAN ('2026-02-01'), PARTITION `pmax`"), std::string::npos) << sql;
}

TEST(PartitionLayout, FormatsMonths) {
  EXPECT_EQ(formatMonth(layoutMonth(2026, 12)), "2026-12");
  EXPECT_EQ(formatMonth(layoutMonth(987, 1)), "0987-01");
}

}  // namespace
}  // namespace sp::routing
