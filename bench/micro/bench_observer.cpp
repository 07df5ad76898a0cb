// Micro-benchmark of what observability adds per statement (issue 16): the
// StatementRecord a session fills (begin, plan, response) and
// StatementObserver::finish (counters, latency histogram, digest, no slow
// log line since the threshold is not reached), for a routed statement and
// for a 16-shard scatter; and the same with every feature off (the record is
// never started). The proxy spends 17-80 µs of CPU per statement
// (docs/bench/REPORT.md): 3% of that is 0.5-2.4 µs.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "proxy/observe/statement_observer.hpp"

namespace {

using sp::proxy::ObserverSettings;
using sp::proxy::StatementObserver;
using sp::proxy::StatementRecord;

const std::string kUser = "app";
const std::string kClient = "127.0.0.1:40000";
constexpr const char* kSql = "SELECT * FROM msg WHERE conv_id = 1234 AND seq > 10 ORDER BY seq LIMIT 20";
constexpr const char* kNormalized = "SELECT * FROM msg WHERE conv_id = ? AND seq > ? ORDER BY seq LIMIT ?";

ObserverSettings onSettings() {
  ObserverSettings s;
  s.enabled = true;
  s.digest_capacity = 1000;
  s.slow_query_us = 1000000;
  return s;
}

sp::routing::Plan routePlan() {
  sp::routing::Plan p;
  p.kind = sp::routing::PlanKind::kRoute;
  p.targets.push_back({"db1", "02", "msg_02", kSql});
  return p;
}

sp::routing::Plan scatterPlan() {
  sp::routing::Plan p;
  p.kind = sp::routing::PlanKind::kScatter;
  p.scatter.emplace();
  for (int i = 0; i < 16; ++i) {
    p.scatter->targets.push_back({i < 8 ? "db0" : "db1", (i < 10 ? "0" : "") + std::to_string(i),
                                  "msg_" + std::to_string(i), kSql});
  }
  return p;
}

// One statement as the session records it. The normalized text is assigned
// into the record's kept capacity: in the proxy it is moved out of the plan
// cache, which built it anyway.
void recordOne(StatementObserver& observer, StatementRecord& record, const sp::routing::Plan& plan, bool scatter) {
  StatementObserver::Session session{kUser, kClient, 7};
  if (observer.enabled()) {
    record.begin(std::chrono::steady_clock::now());
    record.sql = kSql;
  }
  if (record.active) {
    record.normalized.assign(kNormalized);
    record.onPlan(plan, "db0");
    if (scatter) {
      for (const auto& t : plan.scatter->targets) record.shards.push_back({t.shard, t.backend, 120, 1});
    }
  }
  record.onResponse(20, 0);
  observer.finish(record, session);
}

void BM_RoutedStatement(benchmark::State& state) {
  StatementObserver observer(state.range(0) ? onSettings() : ObserverSettings{});
  StatementRecord record;
  auto plan = routePlan();
  for (auto _ : state) recordOne(observer, record, plan, false);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RoutedStatement)->Arg(0)->Arg(1)->ArgName("on");

void BM_ScatterStatement(benchmark::State& state) {
  StatementObserver observer(state.range(0) ? onSettings() : ObserverSettings{});
  StatementRecord record;
  auto plan = scatterPlan();
  for (auto _ : state) recordOne(observer, record, plan, true);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScatterStatement)->Arg(0)->Arg(1)->ArgName("on");

}  // namespace

BENCHMARK_MAIN();
