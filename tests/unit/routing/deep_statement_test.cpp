// Hostile statements through the planner (issue 12): over a parser budget
// they are refused with 9115 whatever table they name; at the deepest the
// budget admits, planning (recursive walks of the tree) fits in a fraction
// of a worker thread's stack.
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
#include <string>
#include <vector>

#include "routing/plan.hpp"
#include "routing/plan_cache.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


std::shared_ptr<const CompiledShardMap> deepTestMap() {
  auto map = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
  EXPECT_TRUE(map.has_value());
  return map ? *map : nullptr;
}

std::string chain(std::string head, std::string_view link, size_t links) {
  head.reserve(head.size() + link.size() * links);
  for (size_t i = 0; i < links; ++i) head += link;
  return head;
}

// Runs `body` on a thread with a stack of `stack_bytes` (the proxy's workers
// get the default 8 MiB); a stack overflow kills the test binary.
// AddressSanitizer's instrumented frames (redzones, no frame sharing) are
// several times larger than the release build's; the ASan stage
// (scripts/asan) keeps the same claim relative to what its build needs.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackScale = 8;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kStackScale = 8;
#else
constexpr size_t kStackScale = 1;
#endif
#else
constexpr size_t kStackScale = 1;
#endif

void runWithStack(size_t stack_bytes, std::function<void()> body) {
  stack_bytes *= kStackScale;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, &body), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(DeepStatement, MillionTermChainIsRefusedWith9115) {
  auto map = deepTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0"};
  const std::string sql = chain("SELECT conv_id FROM msg WHERE conv_id = 5", " AND 1", 999'999);
  Plan plan = planQuery(sql, input);
  ASSERT_EQ(plan.kind, PlanKind::kRefused);
  EXPECT_EQ(plan.refusal->code, RouteErrorCode::kTooComplex);
  EXPECT_EQ(routeErrorInfo(plan.refusal->code).mysql_errno, 9115);
  EXPECT_NE(plan.refusal->message.find("too complex"), std::string::npos) << plan.refusal->message;
  // Through the plan cache too (a long text bypasses it).
  PlanCache cache;
  EXPECT_EQ(cache.plan(sql, input).kind, PlanKind::kRefused);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(DeepStatement, UnshardedTablesAreRefusedTooNotPassedOn) {
  auto map = deepTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0"};
  Plan plan = planQuery(chain("SELECT * FROM users WHERE id = 1", " OR 1", 1'000'000), input);
  ASSERT_EQ(plan.kind, PlanKind::kRefused);
  EXPECT_EQ(plan.refusal->code, RouteErrorCode::kTooComplex);
}

TEST(DeepStatement, ConfiguredLimitsApply) {
  auto map = deepTestMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0"};
  input.limits.max_depth = 100;
  Plan plan = planQuery(chain("SELECT conv_id FROM msg WHERE conv_id = 5", " AND 1", 200), input);
  ASSERT_EQ(plan.kind, PlanKind::kRefused);
  EXPECT_EQ(plan.refusal->code, RouteErrorCode::kTooComplex);
}

// Statements just inside a depth budget, shaped to reach every recursive
// walk of the planner: key conditions, ORs of keys, functions, rewrites.
std::vector<std::string> deepestAdmitted(size_t depth) {
  const size_t links = depth - 10;
  std::vector<std::string> out;
  out.push_back(chain("SELECT conv_id FROM msg WHERE conv_id = 5", " AND seq > 1", links));
  out.push_back(chain("SELECT conv_id FROM msg WHERE conv_id = 5", " OR conv_id = 5", links));
  out.push_back(chain("SELECT conv_id FROM msg WHERE conv_id = 5 AND COALESCE(seq", " + seq", links) + ") > 0");
  out.push_back(chain("UPDATE msg SET seq = seq", " + 1", links) + " WHERE conv_id = 7");
  out.push_back(chain("SELECT COUNT(*) FROM msg WHERE seq > 0", " AND seq > 1", links));
  return out;
}

void planAll(const std::vector<std::string>& statements, const parser::ParseLimits& limits) {
  auto map = deepTestMap();
  ASSERT_TRUE(map);
  for (const auto& sql : statements) {
    PlannerInput input{*map, "db0"};
    input.limits = limits;
    Plan plan = planQuery(sql, input);
    if (plan.kind == PlanKind::kRefused) {
      EXPECT_NE(plan.refusal->code, RouteErrorCode::kTooComplex) << plan.refusal->message;
    }
  }
}

TEST(DeepStatement, DefaultDepthPlansInAnEighthOfAWorkerStack) {
  const parser::ParseLimits limits;  // max_depth 4000
  auto statements = deepestAdmitted(limits.max_depth);
  runWithStack(1u << 20, [&] { planAll(statements, limits); });
}

TEST(DeepStatement, HighestConfigurableDepthPlansInAQuarterOfAWorkerStack) {
  parser::ParseLimits limits;
  limits.max_depth = 10'000;  // conf: limits.max_expression_depth ceiling
  auto statements = deepestAdmitted(limits.max_depth);
  runWithStack(2u << 20, [&] { planAll(statements, limits); });
}

}  // namespace
}  // namespace sp::routing
