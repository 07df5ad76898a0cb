// Micro-benchmarks of the SQL hot path: classify, lexer+parser, planner cold
// (parse + plan + rewrite) and through the plan cache, on the seeds' queries
// (the same statements the sysbench workloads in bench/ send). The shard map
// is conf/shard_map.yaml, so the plans are the ones the proxy makes.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "parser/classify.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "routing/plan.hpp"
#include "routing/plan_cache.hpp"
#include "routing/map/shard_map.hpp"

namespace {

const char* const kMsgRange =
    "SELECT seq, msg_id, sender_uid, msg_type, content, created_at FROM msg "
    "WHERE conv_id = 123 AND seq > 456 ORDER BY seq ASC LIMIT 50";
const char* const kTgPage =
    "SELECT peer_id, message_id, message_time, text_body FROM tg_channel_message "
    "WHERE peer_id = 1001 AND message_month >= '2026-01-01' AND message_month < '2026-03-01' "
    "ORDER BY message_time DESC, message_id DESC LIMIT 100";
const char* const kTgUpsert =
    "INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, "
    "text_body, content_hash, ingested_at) VALUES (1001, 77, '2026-02-01', "
    "'2026-02-03 10:11:12.000', 'edited text', 'abc', '2026-02-03 10:11:13.000') "
    "ON DUPLICATE KEY UPDATE text_body = VALUES(text_body), edited_at = VALUES(ingested_at)";
const char* const kPointSelect = "SELECT c FROM sbtest1 WHERE id=5021";

// Argument index -> query, so every benchmark runs on the same four statements.
const char* queryOf(int64_t i) {
  switch (i) {
    case 0: return kMsgRange;
    case 1: return kTgPage;
    case 2: return kTgUpsert;
    default: return kPointSelect;
  }
}
const char* labelOf(int64_t i) {
  switch (i) {
    case 0: return "msg_range";
    case 1: return "tg_page";
    case 2: return "tg_upsert";
    default: return "point_select(passthrough)";
  }
}

std::shared_ptr<const sp::routing::CompiledShardMap> seedMap() {
  static const auto map = [] {
    const std::vector<std::string> backends{"db0", "db1"};
    auto loaded = sp::routing::loadShardMap(SP_SOURCE_DIR "/conf/shard_map.yaml", backends);
    return loaded ? *loaded : nullptr;
  }();
  return map;
}

void applyQueries(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < 4; ++i) b->Arg(i);
}

void BM_Classify(benchmark::State& state) {
  const std::string_view sql = queryOf(state.range(0));
  for (auto _ : state) {
    auto info = sp::parser::classify(sql);
    benchmark::DoNotOptimize(info);
  }
  state.SetLabel(labelOf(state.range(0)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Classify)->Apply(applyQueries);

// The lexer alone, default dialect (utf8mb4 fast path) and a gbk session
// (multi-byte stepping) on the same statements.
void BM_Tokenize(benchmark::State& state) {
  const std::string_view sql = queryOf(state.range(0));
  for (auto _ : state) {
    auto tokens = sp::parser::tokenize(sql);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetLabel(labelOf(state.range(0)));
  state.SetBytesProcessed(state.iterations() * int64_t(sql.size()));
}
BENCHMARK(BM_Tokenize)->Apply(applyQueries);

void BM_TokenizeGbk(benchmark::State& state) {
  const std::string_view sql = queryOf(state.range(0));
  sp::parser::Dialect gbk;
  gbk.charset = sp::parser::Charset::kGbk;
  for (auto _ : state) {
    auto tokens = sp::parser::tokenize(sql, gbk);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetLabel(labelOf(state.range(0)));
  state.SetBytesProcessed(state.iterations() * int64_t(sql.size()));
}
BENCHMARK(BM_TokenizeGbk)->Apply(applyQueries);

void BM_Parse(benchmark::State& state) {
  const std::string_view sql = queryOf(state.range(0));
  if (!sp::parser::parse(sql)) state.SkipWithError("query does not parse");
  for (auto _ : state) {
    auto statement = sp::parser::parse(sql);
    benchmark::DoNotOptimize(statement);
  }
  state.SetLabel(labelOf(state.range(0)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Parse)->Apply(applyQueries);

void BM_PlanCold(benchmark::State& state) {
  const auto map = seedMap();
  if (!map) {
    state.SkipWithError("cannot load conf/shard_map.yaml");
    return;
  }
  const std::string_view sql = queryOf(state.range(0));
  sp::routing::PlannerInput input{*map, "db0", {}};
  if (sp::routing::planQuery(sql, input).kind == sp::routing::PlanKind::kRefused) {
    state.SkipWithError("query is refused by the planner");
  }
  for (auto _ : state) {
    auto plan = sp::routing::planQuery(sql, input);
    benchmark::DoNotOptimize(plan);
  }
  state.SetLabel(labelOf(state.range(0)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlanCold)->Apply(applyQueries);

// Same statement shape with a different literal each time: a cache hit that
// still has to normalize the text and re-plan with the lifted values.
void BM_PlanCached(benchmark::State& state) {
  const auto map = seedMap();
  if (!map) {
    state.SkipWithError("cannot load conf/shard_map.yaml");
    return;
  }
  const std::string_view sql = queryOf(state.range(0));
  sp::routing::PlannerInput input{*map, "db0", {}};
  sp::routing::PlanCache cache(4096);
  cache.plan(sql, input);
  for (auto _ : state) {
    auto plan = cache.plan(sql, input);
    benchmark::DoNotOptimize(plan);
  }
  if (cache.hits() == 0) state.SkipWithError("plan cache never hit");
  state.SetLabel(labelOf(state.range(0)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlanCached)->Apply(applyQueries);

}  // namespace

BENCHMARK_MAIN();
