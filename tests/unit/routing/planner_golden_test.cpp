// Golden planner cases: tests/unit/routing/golden/*.txt hold (split_*.txt
// are planned with PlannerInput::split_in_lists; names_*.txt with the
// sharded schema `im`, current database `im` and lower_case_table_names=0;
// a comment `# dialect: <sql_mode> | <charset>` plans the case under that
// sql_mode and client charset, `# database: <name>` with that current database)
//   # comment
//   sql> <query on one line>
//     <expected plan, indented two spaces>
// separated by blank lines. Run with SP_REGENERATE_GOLDEN=1 to rewrite the
// expected plans after a deliberate change (then review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parser/dialect.hpp"
#include "routing/plan.hpp"

namespace sp::routing {
namespace {

const std::string kGoldenDir = std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden";

std::shared_ptr<const CompiledShardMap> goldenMap() {
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  auto map = loadShardMap(kGoldenDir + "/shard_map.yaml", kBackends);
  if (!map) ADD_FAILURE() << formatShardMapIssues(map.error(), "shard_map.yaml");
  return map ? *map : nullptr;
}

std::string renderPlan(const Plan& plan) {
  std::ostringstream out;
  switch (plan.kind) {
    case PlanKind::kPassthrough: out << "passthrough " << plan.targets[0].backend; break;
    case PlanKind::kScatter: {
      out << "scatter " << plan.scatter->targets.size() << " shards";
      if (plan.months) out << " months=" << formatMonthStart(*plan.months->lo) << ".." << formatMonthStart(*plan.months->hi);
      for (const auto& t : plan.scatter->targets) {
        out << "\n" << t.backend << " shard=" << t.shard << " table=" << t.physical_table << "\n" << t.sql;
      }
      out << "\nmerge: " << plan.scatter->merge.describe();
      return out.str();
    }
    case PlanKind::kMultiRoute:
    case PlanKind::kMultiWrite: {
      out << (plan.kind == PlanKind::kMultiRoute ? "multi-route " : "multi-write ") << plan.targets.size() << " shards";
      if (plan.months) out << " months=" << formatMonthStart(*plan.months->lo) << ".." << formatMonthStart(*plan.months->hi);
      for (const auto& t : plan.targets) {
        out << "\n" << t.backend << " shard=" << t.shard << " table=" << t.physical_table << "\n" << t.sql;
      }
      return out.str();
    }
    case PlanKind::kRoute: {
      const RouteTarget& t = plan.targets[0];
      out << "route " << t.backend << " shard=" << (t.shard.empty() ? "-" : t.shard) << " table=" << t.physical_table;
      if (!plan.key_values.empty()) {
        out << " keys=";
        for (size_t i = 0; i < plan.key_values.size(); ++i) out << (i ? "," : "") << plan.key_values[i];
      }
      if (plan.months) {
        out << " months=" << (plan.months->isEmpty() ? "empty" : formatMonthStart(*plan.months->lo) + ".." +
                                                                     formatMonthStart(*plan.months->hi));
      }
      if (plan.provably_empty) out << " empty";
      break;
    }
    case PlanKind::kRefused: {
      RouteErrorInfo info = routeErrorInfo(plan.refusal->code);
      out << "refused " << info.mysql_errno << " " << info.sqlstate << " " << info.name << "\n"
          << plan.refusal->message;
      break;
    }
  }
  if (plan.kind != PlanKind::kRefused && plan.targets[0].sql != "") out << "\n" << plan.targets[0].sql;
  return out.str();
}

// Queries are one line in the files; "\\n" stands for a newline inside one.
std::string unescape(const std::string& text) {
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

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

struct GoldenCase {
  std::vector<std::string> comments;
  std::string sql;
  std::string expected;
  int line = 0;
};

std::vector<GoldenCase> readCases(const std::string& path) {
  std::ifstream in(path);
  std::vector<GoldenCase> cases;
  GoldenCase current;
  std::string line;
  int number = 0;
  auto flush = [&] {
    if (!current.sql.empty() || !current.comments.empty()) cases.push_back(std::move(current));
    current = GoldenCase{};
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      flush();
    } else if (line.starts_with("#")) {
      current.comments.push_back(line);
    } else if (line.starts_with("sql> ")) {
      current.sql = unescape(line.substr(5));
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

void writeCases(const std::string& path, const std::vector<GoldenCase>& cases) {
  std::ofstream out(path);
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i) out << "\n";
    for (const auto& c : cases[i].comments) out << c << "\n";
    if (cases[i].sql.empty()) continue;
    out << "sql> " << escape(cases[i].sql) << "\n";
    std::istringstream lines(cases[i].expected);
    std::string line;
    while (std::getline(lines, line)) out << "  " << line << "\n";
  }
}

// The case's own dialect and current database, from its comments.
PlannerInput withCaseComments(PlannerInput input, const GoldenCase& c, std::string& database) {
  for (const auto& comment : c.comments) {
    if (comment.starts_with("# dialect: ")) {
      std::string spec = comment.substr(11);
      auto bar = spec.find('|');
      std::string mode = spec.substr(0, bar);
      parser::Dialect d = parser::fromSqlMode(mode);
      if (bar != std::string::npos) {
        std::string charset = spec.substr(bar + 1);
        charset.erase(0, charset.find_first_not_of(' '));
        auto lookup = parser::charsetByName(charset);
        if (lookup.status == parser::CharsetStatus::kOk) d.charset = lookup.charset;
        else d.unknown_charset = true;
      }
      input.dialect = d;
    } else if (comment.starts_with("# database: ")) {
      database = comment.substr(12);
      input.names.current_database = database;
    }
  }
  return input;
}

TEST(PlannerGolden, AllFiles) {
  auto map = goldenMap();
  ASSERT_TRUE(map);
  // scatter_*.txt: the default input (scatter on); split_*.txt: the older
  // kMultiRoute split without scatter; the others: scatter off, so they keep
  // pinning down the single-shard rules and refusals.
  PlannerInput input{*map, "db0", {}, false, false};
  PlannerInput split_input{*map, "db0", {}, true, false};
  PlannerInput scatter_input{*map, "db0", {}};
  PlannerInput names_input{*map, "db0", {}};
  names_input.names = NameScope{"im", "im", true};
  bool regenerate = std::getenv("SP_REGENERATE_GOLDEN") != nullptr;
  size_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir)) {
    if (entry.path().extension() != ".txt") continue;
    std::string path = entry.path().string();
    auto cases = readCases(path);
    for (auto& c : cases) {
      if (c.sql.empty()) continue;
      ++total;
      // split_*.txt: IN lists spanning shards are split (PlannerInput::split_in_lists).
      bool split = entry.path().filename().string().starts_with("split_");
      bool scatter = entry.path().filename().string().starts_with("scatter_");
      bool names = entry.path().filename().string().starts_with("names_");
      std::string database;
      PlannerInput chosen =
          withCaseComments(names ? names_input : scatter ? scatter_input : split ? split_input : input, c, database);
      std::string actual = renderPlan(planQuery(c.sql, chosen));
      if (regenerate) c.expected = actual;
      else EXPECT_EQ(actual, c.expected) << entry.path().filename().string() << ":" << c.line << ": " << c.sql;
    }
    if (regenerate) writeCases(path, cases);
  }
  EXPECT_GE(total, 200u) << "golden corpus shrank";
}

}  // namespace
}  // namespace sp::routing
