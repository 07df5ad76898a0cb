// The plan cache must give exactly planQuery()'s result: checked over the
// whole golden corpus (first use = miss, second = hit), plus shape sharing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "routing/plan_cache.hpp"

namespace sp::routing {
namespace {

const std::string kCacheGoldenDir = std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden";

std::shared_ptr<const CompiledShardMap> cacheTestMap() {
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  auto map = loadShardMap(kCacheGoldenDir + "/shard_map.yaml", kBackends);
  EXPECT_TRUE(map.has_value());
  return map ? *map : nullptr;
}

std::string unescapeGoldenCell(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<std::string> goldenQueries() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(kCacheGoldenDir)) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("sql> ")) out.push_back(unescapeGoldenCell(line.substr(5)));
    }
  }
  return out;
}

void expectSamePlan(const Plan& a, const Plan& b, const std::string& sql) {
  ASSERT_EQ(a.kind, b.kind) << sql;
  if (a.kind == PlanKind::kRefused) {
    EXPECT_EQ(a.refusal->code, b.refusal->code) << sql;
    EXPECT_EQ(a.refusal->message, b.refusal->message) << sql;
    return;
  }
  ASSERT_EQ(a.targets.size(), b.targets.size()) << sql;
  for (size_t i = 0; i < a.targets.size(); ++i) {  // every shard's SQL (scatter and split plans kept whole)
    EXPECT_EQ(a.targets[i].backend, b.targets[i].backend) << sql;
    EXPECT_EQ(a.targets[i].shard, b.targets[i].shard) << sql;
    EXPECT_EQ(a.targets[i].physical_table, b.targets[i].physical_table) << sql;
    EXPECT_EQ(a.targets[i].sql, b.targets[i].sql) << sql;
  }
  ASSERT_EQ(a.scatter.has_value(), b.scatter.has_value()) << sql;
  if (a.scatter) {
    EXPECT_EQ(a.scatter->merge.describe(), b.scatter->merge.describe()) << sql;
  }
  EXPECT_EQ(a.key_values, b.key_values) << sql;
  EXPECT_EQ(a.months, b.months) << sql;
  EXPECT_EQ(a.provably_empty, b.provably_empty) << sql;
  EXPECT_EQ(a.table, b.table) << sql;
}

TEST(PlanCache, MatchesPlanQueryOnTheGoldenCorpus) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache(1024);
  auto queries = goldenQueries();
  ASSERT_GE(queries.size(), 200u);
  for (int round = 0; round < 2; ++round) {
    for (const auto& sql : queries) expectSamePlan(cache.plan(sql, input), planQuery(sql, input), sql);
  }
  EXPECT_GT(cache.hits(), queries.size() / 2);
  EXPECT_GT(cache.exactHits(), 10u);  // the second round finds the scatter plans and refusals kept whole
}

TEST(PlanCache, OneShapeServesDifferentLiterals) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  Plan a = cache.plan("SELECT * FROM msg WHERE conv_id = 7 /* first */", input);
  Plan b = cache.plan("select * FROM msg   WHERE conv_id = 18446744073709551615", input);  // other case: other shape
  Plan c = cache.plan("SELECT  *  FROM msg WHERE conv_id = 18446744073709551615 -- x", input);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(a.targets[0].sql, "SELECT * FROM msg_07 WHERE conv_id = 7 /* first */");
  EXPECT_EQ(b.targets[0].sql, "select * FROM msg_15   WHERE conv_id = 18446744073709551615");
  EXPECT_EQ(c.targets[0].sql, "SELECT  *  FROM msg_15 WHERE conv_id = 18446744073709551615 -- x");
  EXPECT_EQ(c.targets[0].backend, "db1");
}

TEST(PlanCache, PassthroughShapeSkipsThePlannerUnderTheSameSettingsOnly) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  const std::string first = "SELECT c FROM sbtest1 WHERE id = 17";
  const std::string second = "SELECT c FROM sbtest1 WHERE id = 'x' /* other value */";
  expectSamePlan(cache.plan(first, input), planQuery(first, input), first);
  EXPECT_EQ(cache.passthroughHits(), 0u);  // the first use plans
  Plan hit = cache.plan(second, input);
  expectSamePlan(hit, planQuery(second, input), second);
  EXPECT_EQ(hit.targets[0].sql, second);  // the client's own text, comment kept
  EXPECT_EQ(cache.passthroughHits(), 1u);
  // Another default backend is another setting: planned again, not taken from the first.
  PlannerInput other{*map, "db1", {}};
  Plan elsewhere = cache.plan(second, other);
  EXPECT_EQ(elsewhere.targets[0].backend, "db1");
  EXPECT_EQ(cache.passthroughHits(), 1u);
  // A routed shape is never answered as a passthrough.
  cache.plan("SELECT * FROM msg WHERE conv_id = 7", input);
  Plan routed = cache.plan("SELECT * FROM msg WHERE conv_id = 8", input);
  EXPECT_EQ(routed.kind, PlanKind::kRoute);
  EXPECT_EQ(cache.passthroughHits(), 1u);
}

// The passthrough fast path answers a shape from what it was planned under.
// Each test below first makes the shape a remembered passthrough (planned,
// then hit), then changes one setting under which the same text means a
// sharded table: a fast path that ignored the setting would answer
// kPassthrough to the default backend.
Plan planTwiceThenUnder(PlanCache& cache, const std::string& sql, const PlannerInput& before,
                        const PlannerInput& after) {
  EXPECT_EQ(cache.plan(sql, before).kind, PlanKind::kPassthrough) << sql;
  EXPECT_EQ(cache.plan(sql, before).kind, PlanKind::kPassthrough) << sql;
  return cache.plan(sql, after);
}

TEST(PlanCache, PassthroughFastPathHonoursTheCurrentDatabase) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  // `msg` unqualified, while the session uses another database, is that database's own table.
  PlannerInput elsewhere{*map, "db0", {}};
  elsewhere.names = {"im", "other_db", true};
  PlannerInput in_im{*map, "db0", {}};
  in_im.names = {"im", "im", true};
  PlanCache cache;
  const std::string sql = "SELECT * FROM msg WHERE conv_id = 7";
  Plan after_use = planTwiceThenUnder(cache, sql, elsewhere, in_im);
  EXPECT_EQ(after_use.kind, PlanKind::kRoute);
  expectSamePlan(after_use, planQuery(sql, in_im), sql);
  // And back: the shape routed under `im` is the other database's table again.
  EXPECT_EQ(cache.plan(sql, elsewhere).kind, PlanKind::kPassthrough);
  // The same under a case rule that makes `IM` the sharded schema too.
  PlannerInput upper{*map, "db0", {}};
  upper.names = {"im", "IM", false};
  PlannerInput other_upper{*map, "db0", {}};
  other_upper.names = {"im", "OTHER", false};
  const std::string named = "SELECT * FROM msg WHERE conv_id = 8";
  EXPECT_EQ(planTwiceThenUnder(cache, named, other_upper, upper).kind, PlanKind::kRoute);
}

TEST(PlanCache, PassthroughFastPathHonoursTheSqlMode) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput plain{*map, "db0", {}};
  PlannerInput no_escapes{*map, "db0", {}};
  no_escapes.dialect.no_backslash_escapes = true;
  PlanCache cache;
  // Default sql_mode: one string literal from 'a\' to the last quote, no table.
  // NO_BACKSLASH_ESCAPES: 'a\' ends at its second quote, and msg is read from shard 5.
  const std::string sql = "SELECT 'a\\', conv_id FROM msg WHERE conv_id = 5 -- '";
  Plan under_mode = planTwiceThenUnder(cache, sql, plain, no_escapes);
  EXPECT_EQ(under_mode.kind, PlanKind::kRoute) << sql;
  expectSamePlan(under_mode, planQuery(sql, no_escapes), sql);
}

TEST(PlanCache, PassthroughFastPathHonoursAReloadedShardMap) {
  auto before = cacheTestMap();
  ASSERT_TRUE(before);
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  // The reloaded map shards sbtest1, which the first one did not name.
  auto after = compileShardMap(
      "version: 1\n"
      "tables:\n"
      "  sbtest1: {key: id, method: mod, shards: 4, table: \"sbtest1_{shard}\", backends: {db0: \"0-1\", db1: \"2-3\"}}\n",
      kBackends);
  ASSERT_TRUE(after.has_value());
  ASSERT_NE((*after)->checksum(), before->checksum());
  PlannerInput old_map{*before, "db0", {}};
  PlannerInput new_map{**after, "db0", {}};
  PlanCache cache;
  const std::string sql = "SELECT c FROM sbtest1 WHERE id = 3";
  Plan reloaded = planTwiceThenUnder(cache, sql, old_map, new_map);
  ASSERT_EQ(reloaded.kind, PlanKind::kRoute);
  EXPECT_EQ(reloaded.targets.at(0).backend, "db1");
  EXPECT_EQ(reloaded.targets.at(0).physical_table, "sbtest1_3");
  expectSamePlan(reloaded, planQuery(sql, new_map), sql);
}

TEST(PlanCache, PassthroughFastPathHonoursThePlannerSettings) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput roomy{*map, "db0", {}};
  PlannerInput tight{*map, "db0", {}};
  tight.limits.max_nodes = 3;  // config limits.max_statement_nodes: refused whatever the tables
  PlanCache cache;
  const std::string sql = "SELECT c, k, pad FROM sbtest1 WHERE id = 1 AND k > 2";
  Plan limited = planTwiceThenUnder(cache, sql, roomy, tight);
  EXPECT_EQ(limited.kind, planQuery(sql, tight).kind);
  EXPECT_NE(limited.kind, PlanKind::kPassthrough);
}

TEST(PlanCache, MonthPredicateIsMappedOntoTheOriginalText) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};
  PlanCache cache;
  const char* first = "SELECT * FROM tg_channel_message WHERE peer_id = 1 AND message_time >= '2025-01-01' "
                      "AND message_time < '2025-02-01' ORDER BY message_id";
  const char* second = "SELECT * FROM tg_channel_message WHERE peer_id = 7 AND message_time >= '2025-03-15 10:00:00' "
                       "AND message_time < '2025-05-01'   /* c */ ORDER BY message_id";
  cache.plan(first, input);
  Plan p = cache.plan(second, input);
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_EQ(p.kind, PlanKind::kRoute);
  EXPECT_EQ(p.targets[0].sql,
            "SELECT * FROM tg_channel_message_s01 WHERE peer_id = 7 AND message_time >= '2025-03-15 10:00:00' "
            "AND message_time < '2025-05-01' AND message_month >= '2025-03-01' AND message_month < '2025-05-01'"
            "   /* c */ ORDER BY message_id");
}

TEST(PlanCache, BoundParametersAndEviction) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlanCache cache(2);
  std::vector<ParamValue> params(1);
  params[0].kind = ParamValue::Kind::kUnsigned;
  params[0].u = 9;
  PlannerInput input{*map, "db0", params};
  Plan p = cache.plan("SELECT * FROM msg WHERE conv_id = ?", input);
  ASSERT_EQ(p.kind, PlanKind::kRoute);
  EXPECT_EQ(p.targets[0].sql, "SELECT * FROM msg_09 WHERE conv_id = ?");
  EXPECT_TRUE(p.depends_on_params);
  PlannerInput plain{*map, "db0", {}};
  cache.plan("SELECT 1", plain);
  cache.plan("SELECT 2 FROM conv", plain);
  EXPECT_EQ(cache.size(), 2u);
  cache.plan("SELECT * FROM msg WHERE conv_id = ?", input);  // evicted: a miss again
  EXPECT_EQ(cache.misses(), 4u);
  EXPECT_EQ(cache.evictions(), 2u);
}

TEST(PlanCache, HandsOutTheNormalizedText) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlanCache cache;
  PlannerInput input{*map, "db0", {}};
  std::string normalized;
  cache.plan("select *  from msg /* x */ where conv_id = 42 and body = 'a''b'", input, &normalized);
  EXPECT_EQ(normalized, "select * from msg where conv_id = ? and body = ?");
  cache.plan("SELECT * FROM msg WHERE conv_id IN (1, 2)", input, &normalized);  // a scatter: same text
  EXPECT_EQ(normalized, "SELECT * FROM msg WHERE conv_id IN ( ? , ? )");
}

TEST(MaskLiterals, KeepsTheTextAndHidesValues) {
  EXPECT_EQ(maskLiterals("SELECT /* c */ a FROM t WHERE id = 42 AND s = 'sec''ret' AND h = 0xFF"),
            "SELECT /* c */ a FROM t WHERE id = ? AND s = ? AND h = ?");
  EXPECT_EQ(maskLiterals("SELECT 1.5e3, x'0A', b'1'"), "SELECT ?, ?, ?");
  EXPECT_EQ(maskLiterals("SELECT a FROM t"), "SELECT a FROM t");
  EXPECT_EQ(maskLiterals(""), "");
}

// limits.max_plan_cache_bytes: entries are counted by their estimated size and
// the least recently used ones leave to stay under the budget.
TEST(PlanCache, BoundedInBytes) {
  auto map = cacheTestMap();
  ASSERT_TRUE(map);
  PlannerInput plain{*map, "db0", {}};
  // Ten shapes (the column name differs) of exactly the same size: three fit.
  auto shape = [](int i) { return "SELECT * FROM msg WHERE conv_id = 1 AND seq > 5 AND c" + std::to_string(i) + " = 1"; };
  PlanCache unbounded;
  unbounded.plan(shape(0), plain);
  const size_t one = unbounded.bytes();
  ASSERT_GT(one, PlanCache::entryBytes(0, 0));

  PlanCache cache(4096, 3 * one);
  for (int i = 0; i < 10; ++i) {
    cache.plan(shape(i), plain);
    EXPECT_LE(cache.bytes(), 3 * one) << i;
  }
  EXPECT_EQ(cache.size(), 3u);
  const uint64_t misses = cache.misses();
  cache.plan(shape(9), plain);  // among the three most recent: a hit
  cache.plan(shape(0), plain);  // evicted long ago: a miss
  EXPECT_EQ(cache.misses(), misses + 1);

  // A statement whose tree alone passes the budget is planned, not kept.
  std::string wide = "SELECT * FROM msg WHERE conv_id = 1";
  for (int i = 0; i < 200; ++i) wide += " AND c" + std::to_string(i) + " = 1";
  PlanCache small(4096, one * 2);
  ASSERT_GT(PlanCache::entryBytes(wide.size() / 2, 200), one * 2);
  Plan p = small.plan(wide, plain);
  EXPECT_EQ(p.kind, PlanKind::kRoute);
  EXPECT_EQ(small.size(), 0u);
  EXPECT_EQ(small.bytes(), 0u);

  // Lowering the budget evicts at once; 0 keeps nothing.
  cache.setMaxBytes(0);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  cache.plan("SELECT * FROM msg WHERE conv_id = 1", plain);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace sp::routing
