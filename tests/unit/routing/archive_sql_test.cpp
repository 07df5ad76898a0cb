// Archive batches: key-range predicates, the three statements, cutoff dates.
#include <gtest/gtest.h>

#include "routing/archive_sql.hpp"

namespace sp::routing {
namespace {

const std::vector<std::string> kPk = {"conv_id", "seq"};

TEST(ArchiveSql, KeyRangesAreLexicographic) {
  EXPECT_EQ(keyAfter(kPk, {"7", "100"}), "(`conv_id` > 7 OR (`conv_id` = 7 AND `seq` > 100))");
  EXPECT_EQ(keyUpTo(kPk, {"9", "3"}), "(`conv_id` < 9 OR (`conv_id` = 9 AND `seq` <= 3))");
  EXPECT_EQ(keyAfter({"id"}, {"5"}), "(`id` > 5)");
  EXPECT_EQ(keyAfter(kPk, {}), "");
}

TEST(ArchiveSql, BatchStatementsShareOneRange) {
  auto first = archiveBatchSql("msg_07", "msg_archive_07", kPk, "created_at", "2026-06-04 00:00:00", {}, {}, 2000);
  EXPECT_EQ(first.select_keys,
            "SELECT `conv_id`, `seq` FROM `msg_07` WHERE `created_at` < '2026-06-04 00:00:00' "
            "ORDER BY `conv_id`, `seq` LIMIT 2000");
  EXPECT_TRUE(first.insert.empty());
  auto batch = archiveBatchSql("msg_07", "msg_archive_07", kPk, "created_at", "2026-06-04 00:00:00", {"7", "10"},
                               {"23", "4"}, 2000);
  std::string range = "(`conv_id` < 23 OR (`conv_id` = 23 AND `seq` <= 4)) AND (`conv_id` > 7 OR (`conv_id` = 7 AND "
                      "`seq` > 10)) AND `created_at` < '2026-06-04 00:00:00' ORDER BY `conv_id`, `seq` LIMIT 2000";
  EXPECT_EQ(batch.insert, "INSERT INTO `msg_archive_07` SELECT * FROM `msg_07` WHERE " + range);
  EXPECT_EQ(batch.remove, "DELETE FROM `msg_07` WHERE " + range);
}

TEST(ArchiveSql, PerConversationPrefixKeepsArchivedSeqsBelowHotOnes) {
  auto batch = archiveBatchSql("msg_07", "msg_archive_07", kPk, "created_at", "2026-06-04 00:00:00", {}, {"23", "4"},
                               2000, KeyOrder{"conv_id", "seq"});
  const std::string prefix =
      "`created_at` < '2026-06-04 00:00:00' AND `seq` < IFNULL((SELECT y.`seq` FROM `msg_07` AS y WHERE y.`conv_id` = "
      "`msg_07`.`conv_id` AND y.`created_at` >= '2026-06-04 00:00:00' ORDER BY y.`seq` LIMIT 1), 18446744073709551615)";
  EXPECT_EQ(batch.select_keys, "SELECT `conv_id`, `seq` FROM `msg_07` WHERE " + prefix +
                                   " ORDER BY `conv_id`, `seq` LIMIT 2000");
  EXPECT_EQ(batch.insert, "INSERT INTO `msg_archive_07` SELECT * FROM `msg_07` WHERE (`conv_id` < 23 OR (`conv_id` = "
                          "23 AND `seq` <= 4)) AND " + prefix + " ORDER BY `conv_id`, `seq` LIMIT 2000");
  EXPECT_EQ(batch.remove, "DELETE FROM `msg_07` WHERE (`conv_id` < 23 OR (`conv_id` = 23 AND `seq` <= 4)) AND "
                          "`created_at` < '2026-06-04 00:00:00' AND (`conv_id`, `seq`) IN (SELECT `conv_id`, `seq` FROM "
                          "`msg_archive_07`) ORDER BY `conv_id`, `seq` LIMIT 2000");
}

TEST(ArchiveSql, IntegerKeysOnly) {
  EXPECT_TRUE(isIntegerText("18446744073709551615"));
  EXPECT_TRUE(isIntegerText("-5"));
  EXPECT_FALSE(isIntegerText(""));
  EXPECT_FALSE(isIntegerText("1e3"));
  EXPECT_FALSE(isIntegerText("1 OR 1=1"));
}

TEST(ArchiveSql, CutoffCountsWholeDaysAcrossMonthsAndLeapYears) {
  EXPECT_EQ(cutoffDaysBefore({2026, 12, 1}, 180), "2026-06-04 00:00:00");
  EXPECT_EQ(cutoffDaysBefore({2024, 3, 1}, 1), "2024-02-29 00:00:00");
  EXPECT_EQ(cutoffDaysBefore({2025, 1, 1}, 1), "2024-12-31 00:00:00");
  EXPECT_EQ(daysFromCivil({1970, 1, 1}), 0);
  EXPECT_EQ(civilFromDays(daysFromCivil({2000, 2, 29})), (CivilDate{2000, 2, 29}));
}

}  // namespace
}  // namespace sp::routing
