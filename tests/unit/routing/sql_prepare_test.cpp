// SQL-level PREPARE ... FROM '<text>' (routing/prepare_target.hpp): routed by
// a literal key in the text, refused when the key is bound at EXECUTE.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/plan.hpp"
#include "routing/prepare_target.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


std::shared_ptr<const CompiledShardMap> prepareTestMap() {
  auto map = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
  EXPECT_TRUE(map.has_value());
  return map ? *map : nullptr;
}

Plan plan(std::string_view sql) {
  static auto map = prepareTestMap();
  PlannerInput input{*map, "db0"};
  return planSqlPrepare(sql, input);
}

TEST(SqlPrepare, LiteralKeyRoutesToItsShardWithTheTextRewritten) {
  auto p = plan("PREPARE s FROM 'SELECT content FROM msg WHERE conv_id = 21 AND seq > ?'");
  ASSERT_EQ(p.kind, PlanKind::kRoute) << (p.refusal ? p.refusal->message : "");
  ASSERT_EQ(p.targets.size(), 1u);
  EXPECT_EQ(p.targets[0].sql, "PREPARE s FROM 'SELECT content FROM msg_05 WHERE conv_id = 21 AND seq > ?'");
}

TEST(SqlPrepare, QuotesInTheTextAreWrittenBackDoubled) {
  auto p = plan("PREPARE s FROM 'SELECT seq FROM msg WHERE conv_id = 3 AND content = ''it''''s'''");
  ASSERT_EQ(p.kind, PlanKind::kRoute) << (p.refusal ? p.refusal->message : "");
  EXPECT_EQ(p.targets[0].sql, "PREPARE s FROM 'SELECT seq FROM msg_03 WHERE conv_id = 3 AND content = ''it''''s'''");
}

TEST(SqlPrepare, KeyBoundAtExecuteIsRefusedSayingWhy) {
  auto p = plan("PREPARE s FROM 'SELECT content FROM msg WHERE conv_id = ?'");
  ASSERT_EQ(p.kind, PlanKind::kRefused);
  EXPECT_EQ(p.refusal->code, RouteErrorCode::kMissingKey);
  EXPECT_NE(p.refusal->message.find("EXECUTE ... USING"), std::string::npos) << p.refusal->message;
}

TEST(SqlPrepare, SeveralShardsAreRefused) {
  auto p = plan("PREPARE s FROM 'SELECT content FROM msg WHERE conv_id IN (1, 2)'");
  ASSERT_EQ(p.kind, PlanKind::kRefused);
  EXPECT_NE(p.refusal->message.find("PREPARE ... FROM names sharded table msg"), std::string::npos)
      << p.refusal->message;
}

TEST(SqlPrepare, UnshardedTextsAndVariablesPassThrough) {
  EXPECT_EQ(plan("PREPARE s FROM 'SELECT 1'").kind, PlanKind::kPassthrough);
  EXPECT_EQ(plan("PREPARE s FROM @text").kind, PlanKind::kPassthrough);
}

TEST(SqlPrepare, ATextThatOnlySpellsTheNamePassesThrough) {
  // A column, variable or alias named like the sharded table (issue 20).
  EXPECT_EQ(plan("PREPARE s FROM 'SELECT msg FROM t1 WHERE msg = ?'").kind, PlanKind::kPassthrough);
  EXPECT_EQ(plan("PREPARE s FROM 'CREATE TABLE t2 (id INT, msg TEXT)'").kind, PlanKind::kPassthrough);
}

TEST(SqlPrepare, ABackslashInTheTextIsRefused) {
  auto p = plan("PREPARE s FROM 'SELECT seq FROM msg WHERE conv_id = 3 AND content = ''a\\\\\\\\b'''");
  ASSERT_EQ(p.kind, PlanKind::kRefused) << p.targets.size();
}

TEST(SqlPrepare, TextOfTheStatementIsUnquoted) {
  EXPECT_EQ(sqlPrepareText("PREPARE s FROM 'SHOW TABLES'", {}), "SHOW TABLES");
  EXPECT_EQ(sqlPrepareText("prepare s from \"SELECT 'a'\"", {}), "SELECT 'a'");
  EXPECT_EQ(sqlPrepareText("PREPARE s FROM 'SELECT ''it''''s'''", {}), "SELECT 'it''s'");
  EXPECT_EQ(sqlPrepareText("PREPARE s FROM @text", {}), std::nullopt);
}

}  // namespace
}  // namespace sp::routing
