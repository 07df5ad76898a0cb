// Split multi-row INSERT / REPLACE planning (PlannerInput::multi_shard_writes).
// Golden cases in insert_split_golden.txt, same format as golden/*.txt:
//   # comment
//   sql> <query on one line>
//     <expected plan, indented two spaces>
// planned with multi_shard_writes = best_effort; the refuse-policy cases are
// the TESTs below. SP_REGENERATE_GOLDEN=1 rewrites the expected plans (review
// the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "routing/plan.hpp"
#include "routing/plan_cache.hpp"

namespace sp::routing {
namespace {

const std::string kDir = std::string(SP_SOURCE_DIR) + "/tests/unit/routing";

std::shared_ptr<const CompiledShardMap> splitGoldenMap() {
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  auto map = loadShardMap(kDir + "/golden/shard_map.yaml", kBackends);
  if (!map) ADD_FAILURE() << formatShardMapIssues(map.error(), "shard_map.yaml");
  return map ? *map : nullptr;
}

PlannerInput bestEffort(const CompiledShardMap& map) {
  PlannerInput input{map, "db0", {}};
  input.multi_shard_writes = MultiShardWrites::kBestEffort;
  return input;
}

std::string render(const Plan& plan) {
  std::ostringstream out;
  switch (plan.kind) {
    case PlanKind::kRefused: {
      RouteErrorInfo info = routeErrorInfo(plan.refusal->code);
      out << "refused " << info.mysql_errno << " " << info.name << "\n" << plan.refusal->message;
      return out.str();
    }
    case PlanKind::kMultiWrite: out << "multi-write " << plan.targets.size() << " shards"; break;
    case PlanKind::kRoute: out << "route"; break;
    default: out << "unexpected plan kind " << static_cast<int>(plan.kind); break;
  }
  if (!plan.key_values.empty()) {
    out << " keys=";
    for (size_t i = 0; i < plan.key_values.size(); ++i) out << (i ? "," : "") << plan.key_values[i];
  }
  for (const auto& t : plan.targets) out << "\n" << t.backend << " shard=" << t.shard << " table=" << t.physical_table << "\n" << t.sql;
  return out.str();
}

struct SplitCase {
  std::vector<std::string> comments;
  std::string sql;
  std::string expected;
  int line = 0;
};

std::vector<SplitCase> readCases(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::vector<SplitCase> cases;
  SplitCase current;
  std::string line;
  int number = 0;
  auto flush = [&] {
    if (!current.sql.empty() || !current.comments.empty()) cases.push_back(std::move(current));
    current = SplitCase{};
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      flush();
    } else if (line.starts_with("#")) {
      current.comments.push_back(line);
    } else if (line.starts_with("sql> ")) {
      current.sql = line.substr(5);
      current.line = number;
    } else if (line.starts_with("  ")) {
      current.expected += (current.expected.empty() ? "" : "\n") + line.substr(2);
    } else {
      ADD_FAILURE() << path << ":" << number << ": unexpected line: " << line;
    }
  }
  flush();
  return cases;
}

void writeCases(const std::string& path, const std::vector<SplitCase>& cases) {
  std::ofstream out(path);
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i) out << "\n";
    for (const auto& c : cases[i].comments) out << c << "\n";
    if (cases[i].sql.empty()) continue;
    out << "sql> " << cases[i].sql << "\n";
    std::istringstream lines(cases[i].expected);
    std::string line;
    while (std::getline(lines, line)) out << "  " << line << "\n";
  }
}

TEST(InsertSplit, Golden) {
  auto map = splitGoldenMap();
  ASSERT_TRUE(map);
  const std::string path = kDir + "/insert_split_golden.txt";
  auto cases = readCases(path);
  bool regenerate = std::getenv("SP_REGENERATE_GOLDEN") != nullptr;
  size_t total = 0;
  PlanCache cache;
  for (auto& c : cases) {
    if (c.sql.empty()) continue;
    ++total;
    std::string actual = render(planQuery(c.sql, bestEffort(*map)));
    if (regenerate) {
      c.expected = actual;
      continue;
    }
    EXPECT_EQ(actual, c.expected) << "insert_split_golden.txt:" << c.line << ": " << c.sql;
    // The plan cache must give the same answer (it plans split writes from the original text).
    EXPECT_EQ(render(cache.plan(c.sql, bestEffort(*map))), c.expected) << "through the plan cache: " << c.sql;
    EXPECT_EQ(render(cache.plan(c.sql, bestEffort(*map))), c.expected) << "cached twice: " << c.sql;
  }
  if (regenerate) writeCases(path, cases);
  EXPECT_GE(total, 15u) << "golden corpus shrank";
}

// Every part's rows, put back together, are exactly the original rows: none lost, none doubled.
TEST(InsertSplit, PartsPartitionTheRows) {
  auto map = splitGoldenMap();
  ASSERT_TRUE(map);
  std::string sql = "INSERT INTO msg (conv_id, seq) VALUES ";
  for (int i = 0; i < 100; ++i) sql += (i ? ", " : "") + std::string("(") + std::to_string(i * 7 + 3) + ", " + std::to_string(i) + ")";
  Plan plan = planQuery(sql, bestEffort(*map));
  ASSERT_EQ(plan.kind, PlanKind::kMultiWrite);
  EXPECT_EQ(plan.targets.size(), 16u);
  size_t rows = 0;
  for (const auto& t : plan.targets) {
    uint32_t shard = static_cast<uint32_t>(std::stoul(t.shard));
    std::string_view values = t.sql;
    values.remove_prefix(values.find("VALUES ") + 7);
    // Each "(key, seq)" in this part must belong to this shard (mod 16).
    size_t pos = 0;
    while ((pos = values.find('(', pos)) != std::string_view::npos) {
      uint64_t key = std::stoull(std::string(values.substr(pos + 1)));
      EXPECT_EQ(key % 16, shard) << t.sql;
      ++rows;
      ++pos;
    }
    EXPECT_EQ(t.physical_table, "msg_" + t.shard);
    EXPECT_TRUE(t.sql.starts_with("INSERT INTO msg_" + t.shard + " (conv_id, seq) VALUES (")) << t.sql;
  }
  EXPECT_EQ(rows, 100u);
  EXPECT_EQ(plan.targets.front().shard, "03");  // the first row's shard comes first
}

TEST(InsertSplit, RefusePolicyKeepsTheShardList) {
  auto map = splitGoldenMap();
  ASSERT_TRUE(map);
  PlannerInput input{*map, "db0", {}};  // default: refuse
  Plan plan = planQuery("INSERT INTO msg (conv_id, seq) VALUES (1, 1), (2, 1), (17, 2)", input);
  ASSERT_EQ(plan.kind, PlanKind::kRefused);
  EXPECT_EQ(plan.refusal->code, RouteErrorCode::kInsertMultiShard);
  EXPECT_NE(plan.refusal->message.find("has rows for shards 01, 02"), std::string::npos) << plan.refusal->message;
  EXPECT_NE(plan.refusal->message.find("multi_shard_writes"), std::string::npos) << plan.refusal->message;
  PlanCache cache;
  EXPECT_EQ(render(cache.plan("INSERT INTO msg (conv_id, seq) VALUES (1, 1), (2, 1)", input)).substr(0, 12),
            "refused 9109");
}

TEST(InsertSplit, OneShardStaysARoute) {
  auto map = splitGoldenMap();
  ASSERT_TRUE(map);
  Plan plan = planQuery("INSERT INTO msg (conv_id, seq) VALUES (1, 1), (17, 1)", bestEffort(*map));
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets.front().sql, "INSERT INTO msg_01 (conv_id, seq) VALUES (1, 1), (17, 1)");
}

}  // namespace
}  // namespace sp::routing
