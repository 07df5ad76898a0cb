// Merged column metadata follows what one MariaDB 10.11 reports (checked on
// mariadbd 10.11.19 with the seeds' tg_channel_message: MIN(text_body) is a
// MEDIUMTEXT utf8mb4, MIN(content_hash) a CHAR(64)).
#include <gtest/gtest.h>

#include "routing/merge/merge.hpp"
#include "routing/merge/merge_metadata.hpp"

namespace sp::routing {
namespace {

using protocol::ColumnDefinition41;
using protocol::ColumnType;

ColumnDefinition41 def(const char* name, ColumnType type, uint32_t length, uint8_t decimals) {
  ColumnDefinition41 c;
  c.name = name;
  c.type = type;
  c.column_length = length;
  c.decimals = decimals;
  c.character_set = 45;  // utf8mb4_general_ci
  return c;
}

TEST(MergeMetadata, MaterializedStringForm) {
  auto text = materializedString(def("a", ColumnType::kMediumBlob, 268435440, 39));
  EXPECT_EQ(text.type, ColumnType::kBlob);
  EXPECT_EQ(text.column_length, 67108860u);
  EXPECT_EQ(text.decimals, 0);
  auto chars = materializedString(def("h", ColumnType::kString, 256, 39));
  EXPECT_EQ(chars.type, ColumnType::kString);
  EXPECT_EQ(chars.column_length, 256u);
  EXPECT_EQ(chars.decimals, 0);
  auto number = materializedString(def("n", ColumnType::kNewDecimal, 42, 4));
  EXPECT_EQ(number.decimals, 4);
}

TEST(MergeMetadata, SortAfterGroupingOnlyWhenTheGroupOrderDoesNotGiveIt) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.group_by = {0, 1};
  EXPECT_FALSE(sortsAfterGrouping(spec));  // GROUP BY a, b
  spec.order_by = {{0, false}};
  EXPECT_FALSE(sortsAfterGrouping(spec));  // ORDER BY a
  spec.order_by = {{0, true}, {1, true}};
  EXPECT_FALSE(sortsAfterGrouping(spec));  // ORDER BY a DESC, b DESC
  spec.order_by = {{0, false}, {1, true}};
  EXPECT_TRUE(sortsAfterGrouping(spec));
  spec.order_by = {{2, false}};
  EXPECT_TRUE(sortsAfterGrouping(spec));   // ORDER BY an aggregate
  spec.limit = 0;
  EXPECT_FALSE(sortsAfterGrouping(spec));  // LIMIT 0: "Zero limit", nothing executed
  spec.limit.reset();
  spec.group_by.clear();
  EXPECT_FALSE(sortsAfterGrouping(spec));  // one row: nothing to sort
}

TEST(MergeMetadata, AnyShardsMaterializedFormWins) {
  MergeSpec spec;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}};
  ResultMerger merger(spec, 2);
  ASSERT_TRUE(merger.setColumns(0, {def("x", ColumnType::kVarString, 260, 39)}));
  EXPECT_EQ(merger.outputColumns()[0].decimals, 39);
  // The other shard's plan went through a temporary table (DISTINCT over CONCAT).
  ASSERT_TRUE(merger.setColumns(1, {def("x", ColumnType::kBlob, 260, 0)}));
  EXPECT_EQ(merger.outputColumns()[0].type, ColumnType::kBlob);
  EXPECT_EQ(merger.outputColumns()[0].decimals, 0);
}

TEST(MergeMetadata, OrderedGroupsReportTheMaterializedForm) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.columns = {{MergeOp::kValue, 0, 0, true, {}}, {MergeOp::kMin, 1, 0, true, {}}};
  spec.group_by = {0};
  spec.order_by = {{1, false}};  // GROUP BY peer_id ORDER BY MIN(text_body)
  ResultMerger merger(spec, 1);
  ASSERT_TRUE(merger.setColumns(0, {def("peer_id", ColumnType::kLongLong, 20, 0),
                                    def("a", ColumnType::kMediumBlob, 268435440, 39)}));
  EXPECT_EQ(merger.outputColumns()[0].type, ColumnType::kLongLong);
  EXPECT_EQ(merger.outputColumns()[1].type, ColumnType::kBlob);
  EXPECT_EQ(merger.outputColumns()[1].column_length, 67108860u);
}

}  // namespace
}  // namespace sp::routing

namespace sp::routing {
namespace {

// WHERE message_month = '2025-02-01' ... GROUP BY message_month ORDER BY COUNT(*):
// MariaDB drops the constant group column, one group needs no sort.
TEST(MergeMetadata, ConstantGroupColumnsDoNotSort) {
  MergeSpec spec;
  spec.aggregate = true;
  spec.group_by = {0};
  spec.order_by = {{1, false}};
  EXPECT_TRUE(sortsAfterGrouping(spec));
  spec.constant_columns = {0};
  EXPECT_FALSE(sortsAfterGrouping(spec));
  spec.group_by = {0, 2};
  spec.order_by = {{0, true}, {2, false}};  // ORDER BY the constant DESC, then the real group
  EXPECT_FALSE(sortsAfterGrouping(spec));
}

}  // namespace
}  // namespace sp::routing
