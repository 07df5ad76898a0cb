#include <gtest/gtest.h>

#include "routing/explain.hpp"

namespace sp::routing {
namespace {

TEST(Explain, DetectsThePrefix) {
  EXPECT_EQ(explainShardsStatement("EXPLAIN SHARDS SELECT 1"), "SELECT 1");
  EXPECT_EQ(explainShardsStatement("explain /* x */ shards\n  select * from msg"), "select * from msg");
  EXPECT_EQ(explainShardsStatement("  Explain Shards INSERT INTO msg VALUES (1)"), "INSERT INTO msg VALUES (1)");
  EXPECT_FALSE(explainShardsStatement("EXPLAIN SELECT 1"));
  EXPECT_FALSE(explainShardsStatement("EXPLAIN SHARDS"));
  EXPECT_FALSE(explainShardsStatement("SELECT 'EXPLAIN SHARDS'"));
  EXPECT_FALSE(explainShardsStatement("EXPLAIN `SHARDS` SELECT 1"));
}

TEST(Explain, RowsForEachPlanKind) {
  auto map = compileShardMap(
      "version: 1\ntables:\n  msg: {key: conv_id, method: mod, shards: 2, table: \"msg_{shard}\", "
      "backends: {db0: \"0\", db1: \"1\"}}\n",
      std::vector<std::string>{"db0", "db1"});
  ASSERT_TRUE(map);
  PlannerInput input{**map, "db0", {}};
  auto routed = explainRows(planQuery("SELECT * FROM msg WHERE conv_id = 3", input));
  ASSERT_EQ(routed.size(), 1u);
  EXPECT_EQ(routed[0].shard, "1");
  EXPECT_EQ(routed[0].backend, "db1");
  EXPECT_EQ(routed[0].table, "msg_1");
  EXPECT_EQ(routed[0].sql, "SELECT * FROM msg_1 WHERE conv_id = 3");
  auto passed = explainRows(planQuery("SELECT 1", input));
  ASSERT_EQ(passed.size(), 1u);
  EXPECT_EQ(passed[0].shard, "-");
  EXPECT_EQ(passed[0].backend, "db0");
  EXPECT_EQ(passed[0].table, "-");
  auto refused = explainRows(planQuery("SELECT * FROM msg", input));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].sql.rfind("ERROR 9101 (42000): shardproxy: SELECT on sharded table msg needs", 0), 0u);
}

}  // namespace
}  // namespace sp::routing
