// Each statement is analysed once (parser/analysis.hpp): a plan-cache hit
// costs the one lexing pass of the analysis, and no parse (a parse would lex
// again: parser::lexerRuns() counts every lexer started). Scatter plans are
// kept whole, with their per-shard SQL and merge specification.
#include <gtest/gtest.h>

#include <string>

#include "parser/analysis.hpp"
#include "routing/explain.hpp"
#include "routing/plan_cache.hpp"

namespace sp::routing {
namespace {

std::shared_ptr<const CompiledShardMap> goldenMap() {
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  auto map = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
  EXPECT_TRUE(map.has_value());
  return map ? *map : nullptr;
}

// What the session does for a COM_QUERY: analyse, look for EXPLAIN SHARDS, plan.
Plan analyseAndPlan(std::string_view sql, PlanCache& cache, const PlannerInput& input,
                    parser::StatementAnalysis& analysis) {
  parser::analyze(sql, {}, analysis);
  EXPECT_FALSE(explainShardsStatement(analysis.sql, analysis.tokens));
  return cache.plan(analysis.sql, analysis.defaultTokens(), input);
}

TEST(AnalysisOnce, LexerRunsCountsEveryLexerStarted) {
  const uint64_t before = parser::lexerRuns();
  parser::tokenize("SELECT 1");
  parser::classify("SELECT 2");
  EXPECT_EQ(parser::lexerRuns() - before, 2u);
}

TEST(AnalysisOnce, RoutedCacheHitLexesOnceAndDoesNotParse) {
  auto map = goldenMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  parser::StatementAnalysis analysis;
  const uint64_t miss_start = parser::lexerRuns();
  analyseAndPlan("SELECT * FROM msg WHERE conv_id = 7", cache, input, analysis);
  EXPECT_GT(parser::lexerRuns() - miss_start, 1u);  // the miss parsed (one more lexing pass)
  const uint64_t hit_start = parser::lexerRuns();
  Plan plan = analyseAndPlan("SELECT  *  FROM msg WHERE conv_id = 18446744073709551615", cache, input, analysis);
  EXPECT_EQ(parser::lexerRuns() - hit_start, 1u);
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets[0].sql, "SELECT  *  FROM msg_15 WHERE conv_id = 18446744073709551615");
  EXPECT_EQ(analysis.info.kind, parser::StatementKind::kSelect);
}

TEST(AnalysisOnce, ScatterPlanIsKeptWholeWithItsShardSqlAndMerge) {
  auto map = goldenMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  parser::StatementAnalysis analysis;
  const std::string sql = "SELECT conv_id, COUNT(*) FROM msg GROUP BY conv_id ORDER BY 2 DESC LIMIT 5";
  Plan first = analyseAndPlan(sql, cache, input, analysis);
  ASSERT_EQ(first.kind, PlanKind::kScatter);
  const uint64_t hit_start = parser::lexerRuns();
  Plan again = analyseAndPlan(sql, cache, input, analysis);
  EXPECT_EQ(parser::lexerRuns() - hit_start, 1u);
  EXPECT_EQ(cache.exactHits(), 1u);
  Plan direct = planQuery(sql, input);
  ASSERT_EQ(again.kind, PlanKind::kScatter);
  ASSERT_TRUE(again.scatter && direct.scatter);
  ASSERT_EQ(again.scatter->targets.size(), direct.scatter->targets.size());
  for (size_t i = 0; i < direct.scatter->targets.size(); ++i) {
    EXPECT_EQ(again.scatter->targets[i].sql, direct.scatter->targets[i].sql);
    EXPECT_EQ(again.scatter->targets[i].backend, direct.scatter->targets[i].backend);
  }
  EXPECT_EQ(again.scatter->merge.describe(), direct.scatter->merge.describe());
  EXPECT_EQ(again.table, direct.table);
  // Other literals: another text, planned (and kept) on its own.
  Plan other = analyseAndPlan("SELECT conv_id, COUNT(*) FROM msg GROUP BY conv_id ORDER BY 2 DESC LIMIT 6", cache,
                              input, analysis);
  ASSERT_TRUE(other.scatter);
  EXPECT_EQ(other.scatter->merge.describe(),
            planQuery("SELECT conv_id, COUNT(*) FROM msg GROUP BY conv_id ORDER BY 2 DESC LIMIT 6", input)
                .scatter->merge.describe());
  EXPECT_EQ(cache.exactHits(), 1u);
}

TEST(AnalysisOnce, KeptPlanIsNotReusedUnderOtherPlannerSettings) {
  auto map = goldenMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  parser::StatementAnalysis analysis;
  const std::string sql = "SELECT COUNT(*) FROM msg";
  analyseAndPlan(sql, cache, input, analysis);
  analyseAndPlan(sql, cache, input, analysis);
  EXPECT_EQ(cache.exactHits(), 1u);
  PlannerInput other_backend{*map, "db1", {}};  // another setting: not the kept plan
  analyseAndPlan(sql, cache, other_backend, analysis);
  EXPECT_EQ(cache.exactHits(), 1u);
}

TEST(AnalysisOnce, RefusalIsKeptWithItsMessage) {
  auto map = goldenMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  input.allow_scatter = false;
  PlanCache cache;
  parser::StatementAnalysis analysis;
  const std::string sql = "SELECT * FROM msg WHERE conv_id IN (1, 2)";
  Plan first = analyseAndPlan(sql, cache, input, analysis);
  ASSERT_EQ(first.kind, PlanKind::kRefused);
  const uint64_t hit_start = parser::lexerRuns();
  Plan again = analyseAndPlan(sql, cache, input, analysis);
  EXPECT_EQ(parser::lexerRuns() - hit_start, 1u);
  ASSERT_EQ(again.kind, PlanKind::kRefused);
  EXPECT_EQ(again.refusal->message, first.refusal->message);
}

}  // namespace
}  // namespace sp::routing
