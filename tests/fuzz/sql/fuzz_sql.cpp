// libFuzzer target: one statement through everything the proxy does with SQL
// text: lexer, classify, parser (+ S-expression printer), placeholder
// substitution, planner and rewrite (planQuery against the golden shard map of
// tests/unit/routing/golden), and the plan cache. Seeds: the parser and
// planner golden queries (scripts/fuzz extracts them); dictionary sql.dict.
// Invariants: no crash or sanitizer report; the plan cache answers exactly
// what planQuery answers (its documented contract), on a miss and on a hit.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/classify.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "parser/placeholders.hpp"
#include "routing/plan.hpp"
#include "routing/plan_cache.hpp"

namespace sp::routing {
namespace {

void fail(const char* what, std::string_view sql) {
  std::fprintf(stderr, "sql invariant broken: %s\nstatement: %.*s\n", what, static_cast<int>(sql.size()),
               sql.data());
  std::abort();
}

const CompiledShardMap& goldenMap() {
  static const std::shared_ptr<const CompiledShardMap> map = [] {
    static const std::vector<std::string> kBackends = {"db0", "db1"};
    auto loaded = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
    if (!loaded) {
      std::fprintf(stderr, "%s\n", formatShardMapIssues(loaded.error(), "shard_map.yaml").c_str());
      std::abort();
    }
    return *loaded;
  }();
  return *map;
}

bool samePlan(const Plan& a, const Plan& b) {
  if (a.kind != b.kind || a.targets.size() != b.targets.size()) return false;
  for (size_t i = 0; i < a.targets.size(); ++i) {
    const RouteTarget& x = a.targets[i];
    const RouteTarget& y = b.targets[i];
    if (x.backend != y.backend || x.shard != y.shard || x.physical_table != y.physical_table || x.sql != y.sql) {
      return false;
    }
  }
  if (a.refusal.has_value() != b.refusal.has_value()) return false;
  if (a.refusal && a.refusal->code != b.refusal->code) return false;
  return a.key_values == b.key_values && a.provably_empty == b.provably_empty;
}

std::string describe(const Plan& p) {
  std::string out = "kind " + std::to_string(static_cast<int>(p.kind));
  if (p.refusal) out += " refused " + std::to_string(static_cast<int>(p.refusal->code)) + ": " + p.refusal->message;
  for (const RouteTarget& t : p.targets) out += "\n  " + t.backend + " " + t.shard + " " + t.physical_table + ": " + t.sql;
  return out;
}

void planBothWays(std::string_view sql, const PlannerInput& input) {
  Plan direct = planQuery(sql, input);
  PlanCache cache(8);
  Plan miss = cache.plan(sql, input);
  Plan hit = cache.plan(sql, input);
  if (!samePlan(direct, miss) || !samePlan(direct, hit)) {
    std::fprintf(stderr, "planQuery: %s\ncache miss: %s\ncache hit: %s\n", describe(direct).c_str(),
                 describe(miss).c_str(), describe(hit).c_str());
  }
  if (!samePlan(direct, miss)) fail("plan cache (miss) differs from planQuery", sql);
  if (!samePlan(direct, hit)) fail("plan cache (hit) differs from planQuery", sql);
}

}  // namespace
}  // namespace sp::routing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sp;
  std::string_view sql(reinterpret_cast<const char*>(data), size);

  auto tokens = parser::tokenize(sql);
  for (const auto& t : tokens) (void)parser::tokenKindName(t.kind);
  parser::StatementInfo info = parser::classify(sql);
  (void)info;

  parser::ParseLimits small{.max_nodes = 2000, .max_depth = 64, .max_in_values = 50};
  auto parsed = parser::parse(sql);
  uint32_t placeholders = 0;
  if (parsed) {
    (void)parser::toSExpr(*parsed, sql);
    placeholders = parsed->placeholder_count;
  }
  (void)parser::parse(sql, small);

  std::vector<std::string> literals;
  for (uint32_t i = 0; i < placeholders && i < 64; ++i) literals.push_back(i % 2 ? "'7'" : "42");
  (void)parser::substitutePlaceholders(sql, literals);

  const routing::CompiledShardMap& map = routing::goldenMap();
  routing::PlannerInput defaults{.map = map, .default_backend = "db0"};
  routing::planBothWays(sql, defaults);

  std::vector<routing::ParamValue> params(std::min<uint32_t>(placeholders, 64));
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].kind = i % 2 ? routing::ParamValue::Kind::kString : routing::ParamValue::Kind::kUnsigned;
    params[i].u = 42 + i;
    params[i].s = "2025-03-01";
  }
  routing::PlannerInput other{.map = map,
                              .default_backend = "db0",
                              .params = params,
                              .split_in_lists = true,
                              .allow_scatter = false,
                              .multi_shard_writes = routing::MultiShardWrites::kBestEffort,
                              .limits = small};
  routing::planBothWays(sql, other);
  return 0;
}
