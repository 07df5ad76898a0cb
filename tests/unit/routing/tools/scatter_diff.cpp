// Differential check of scatter-gather: loads the same seeded rows into a
// table sharded 4 ways (m_0..m_3) and into one unsharded table (m_all) on
// one MariaDB, then runs generated SELECTs both ways: planned + sent to the
// shards + merged by ResultMerger, and directly on m_all. Column names,
// types, decimals and values (in order) must be equal; a refused query is
// reported separately (it must not count as a pass).
//   scatter_diff <unix_socket> [queries=300] [seed=1]
// Exit 0 when every planned query matched.
#include <mysql.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "routing/merge/merge.hpp"
#include "routing/plan.hpp"

namespace {

using namespace sp::routing;

struct Result {
  std::vector<sp::protocol::ColumnDefinition41> columns;
  std::vector<MergedRow> rows;
  std::string error;
};

Result run(MYSQL* db, const std::string& sql) {
  Result r;
  if (mysql_query(db, sql.c_str())) {
    r.error = mysql_error(db);
    return r;
  }
  MYSQL_RES* res = mysql_store_result(db);
  if (!res) return r;
  unsigned n = mysql_num_fields(res);
  MYSQL_FIELD* fields = mysql_fetch_fields(res);
  for (unsigned i = 0; i < n; ++i) {
    sp::protocol::ColumnDefinition41 c;
    c.name = fields[i].name;
    c.type = static_cast<sp::protocol::ColumnType>(fields[i].type);
    c.column_length = static_cast<uint32_t>(fields[i].length);
    c.decimals = static_cast<uint8_t>(fields[i].decimals);
    c.character_set = static_cast<uint16_t>(fields[i].charsetnr);
    c.flags = static_cast<uint16_t>(fields[i].flags);
    r.columns.push_back(c);
  }
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    unsigned long* lengths = mysql_fetch_lengths(res);
    MergedRow out;
    for (unsigned i = 0; i < n; ++i) {
      out.push_back(row[i] ? std::optional<std::string>(std::string(row[i], lengths[i])) : std::nullopt);
    }
    r.rows.push_back(std::move(out));
  }
  mysql_free_result(res);
  return r;
}

std::string show(const MergedRow& row) {
  std::string s;
  for (const auto& v : row) s += (s.empty() ? "" : "|") + (v ? *v : "NULL");
  return s;
}

void setup(MYSQL* db, std::mt19937& rng) {
  const char* schema =
      "(conv_id INT UNSIGNED NOT NULL, seq BIGINT NOT NULL, user_id INT, len INT, d DECIMAL(10,2), "
      "name VARCHAR(20) COLLATE utf8mb4_general_ci, f DOUBLE, PRIMARY KEY (seq))";
  run(db, "DROP DATABASE IF EXISTS scatter_diff");
  run(db, "CREATE DATABASE scatter_diff");
  run(db, "USE scatter_diff");
  for (std::string t : {"m_0", "m_1", "m_2", "m_3", "m_all"}) run(db, "CREATE TABLE " + t + " " + schema);
  const char* names[] = {"alpha", "Beta", "gamma", "Delta", "beta2", "Zed", "épée"};
  for (int seq = 1; seq <= 400; ++seq) {
    unsigned conv = rng() % 23;
    auto maybe = [&](std::string v) { return rng() % 7 == 0 ? std::string("NULL") : v; };
    std::string values = "(" + std::to_string(conv) + ", " + std::to_string(seq) + ", " +
                         maybe(std::to_string(rng() % 9)) + ", " + maybe(std::to_string(static_cast<int>(rng() % 2000) - 500)) +
                         ", " + maybe(std::to_string(static_cast<int>(rng() % 100000) - 20000) + ".0" + std::to_string(rng() % 10)) +
                         ", " + maybe("'" + std::string(names[rng() % 7]) + "'") + ", " +
                         maybe(std::to_string(static_cast<int>(rng() % 64)) + ".25") + ")";
    run(db, "INSERT INTO m_" + std::to_string(conv % 4) + " VALUES " + values);
    run(db, "INSERT INTO m_all VALUES " + values);
  }
}

std::string pick(std::mt19937& rng, const std::vector<std::string>& options) { return options[rng() % options.size()]; }

std::string generate(std::mt19937& rng) {
  std::string where = pick(rng, {"", " WHERE seq > 100", " WHERE conv_id IN (1, 2, 7, 12)", " WHERE len IS NULL",
                                 " WHERE conv_id IN (3, 4) AND d > 0", " WHERE name >= 'c'"});
  if (rng() % 2) {  // rows, totally ordered by seq at the end
    std::string cols = pick(rng, {"seq, name, d", "*", "seq, len AS l, f", "name, seq"});
    std::string order = pick(rng, {"", " ORDER BY seq", " ORDER BY name, seq", " ORDER BY d DESC, seq",
                                   " ORDER BY l, seq DESC", " ORDER BY user_id DESC, seq"});
    if (cols != "seq, len AS l, f" && order.find(" l,") != std::string::npos) order = " ORDER BY len, seq DESC";
    std::string limit = order.empty() ? "" : pick(rng, {"", " LIMIT 5", " LIMIT 3 OFFSET 7", " LIMIT 1000", " LIMIT 390, 20"});
    return "SELECT " + cols + " FROM m" + where + order + limit;
  }
  std::vector<std::string> aggs = {"COUNT(*)", "COUNT(len)", "SUM(len)", "SUM(d)", "AVG(len)", "AVG(d)", "MIN(name)",
                                   "MAX(name)", "MIN(d)", "MAX(seq)", "SUM(f)", "AVG(f)", "COUNT(DISTINCT user_id)",
                                   "SUM(DISTINCT user_id)"};
  std::string group = pick(rng, {"", "user_id", "name", "conv_id % 3"});
  std::string select = group.empty() ? "" : group + ", ";
  int n = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) select += (i ? ", " : "") + pick(rng, aggs);
  std::string sql = "SELECT " + select + " FROM m" + where;
  if (!group.empty()) sql += " GROUP BY " + group;
  if (!group.empty() && rng() % 3 == 0) sql += pick(rng, {" HAVING COUNT(*) > 10", " HAVING SUM(len) < 5000"});
  if (!group.empty() && rng() % 2) sql += " ORDER BY 2 DESC, 1" + pick(rng, {"", " LIMIT 3", " LIMIT 2 OFFSET 2"});
  return sql;
}

std::string direct(std::string sql) {
  auto at = sql.find(" FROM m");
  return sql.replace(at, 7, " FROM m_all");
}

// Returns "" on match, else what differs.
std::string compare(MYSQL* db, const std::string& sql, const Plan& plan) {
  const ScatterPlan& sp = *plan.scatter;
  ResultMerger merger(sp.merge, sp.targets.size());
  for (size_t s = 0; s < sp.targets.size(); ++s) {
    Result r = run(db, sp.targets[s].sql);
    if (!r.error.empty()) return "shard error: " + r.error + " in " + sp.targets[s].sql;
    if (auto ok = merger.setColumns(s, r.columns); !ok) return ok.error();
    for (const auto& row : r.rows) {
      sp::protocol::TextRow text;
      for (const auto& v : row) text.push_back(v ? std::optional<std::string_view>(*v) : std::nullopt);
      if (auto ok = merger.pushRow(s, text); !ok) return ok.error();
    }
    merger.finishShard(s);
  }
  std::vector<MergedRow> merged;
  while (auto row = merger.nextRow()) merged.push_back(std::move(*row));
  Result expected = run(db, direct(sql));
  if (!expected.error.empty()) return "direct error: " + expected.error;
  const auto& got = merger.outputColumns();
  if (got.size() != expected.columns.size()) return "column count " + std::to_string(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& a = got[i];
    const auto& b = expected.columns[i];
    // MariaDB itself reports decimals 0 or 39 for MIN/MAX of a string column
    // depending on the execution plan (ORDER BY or not): meaningless for
    // strings, so compared for numeric columns only.
    bool numeric = classify(b) == ValueClass::kExact || classify(b) == ValueClass::kFloat;
    bool decimals_differ = numeric && a.decimals != b.decimals;
    if (a.name != b.name || a.type != b.type || decimals_differ || a.column_length != b.column_length) {
      return "column " + std::to_string(i) + ": got " + a.name + " type " + std::to_string(int(a.type)) + " len " +
             std::to_string(a.column_length) + " dec " + std::to_string(a.decimals) + ", want " + b.name + " type " +
             std::to_string(int(b.type)) + " len " + std::to_string(b.column_length) + " dec " + std::to_string(b.decimals);
    }
  }
  if (merged.size() != expected.rows.size()) {
    return "rows: got " + std::to_string(merged.size()) + ", want " + std::to_string(expected.rows.size());
  }
  if (sql.find("ORDER BY") == std::string::npos && sql.find("GROUP BY") == std::string::npos) {
    // No order asked for: the rows as a multiset.
    std::sort(merged.begin(), merged.end());
    std::sort(expected.rows.begin(), expected.rows.end());
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    if (merged[i] != expected.rows[i]) return "row " + std::to_string(i) + ": got " + show(merged[i]) + " want " + show(expected.rows[i]);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: scatter_diff UNIX_SOCKET [QUERIES] [SEED]\n";
    return 2;
  }
  int queries = argc > 2 ? std::atoi(argv[2]) : 300;
  unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
  MYSQL* db = mysql_init(nullptr);
  if (!mysql_real_connect(db, nullptr, "root", nullptr, nullptr, 0, argv[1], 0)) {
    std::cerr << "connect: " << mysql_error(db) << "\n";
    return 2;
  }
  mysql_set_character_set(db, "utf8mb4");
  std::mt19937 rng(seed);
  setup(db, rng);
  std::string map_path = "/tmp/scatter_diff_map_" + std::to_string(seed) + ".yaml";
  std::ofstream(map_path) << "version: 1\ntables:\n  m: {key: conv_id, method: mod, shards: 4, table: \"m_{shard}\", "
                             "backends: {db0: \"0-3\"}, scatter: allow}\n";
  std::vector<std::string> backends = {"db0"};
  auto map = loadShardMap(map_path, backends);
  std::remove(map_path.c_str());
  if (!map) {
    std::cerr << formatShardMapIssues(map.error(), map_path);
    return 2;
  }
  PlannerInput input{**map, "db0", {}};
  int passed = 0, failed = 0, refused = 0;
  for (int i = 0; i < queries; ++i) {
    std::string sql = generate(rng);
    Plan plan = planQuery(sql, input);
    if (plan.kind == PlanKind::kRefused) {
      ++refused;
      std::cout << "REFUSED " << sql << "\n  " << plan.refusal->message << "\n";
      continue;
    }
    if (plan.kind != PlanKind::kScatter) {
      ++passed;  // single shard: not this tool's business
      continue;
    }
    std::string diff = compare(db, sql, plan);
    if (diff.empty()) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAIL " << sql << "\n  " << diff << "\n";
    }
  }
  std::cout << "scatter_diff seed " << seed << ": " << passed << " passed, " << failed << " failed, " << refused
            << " refused\n";
  mysql_close(db);
  return failed == 0 ? 0 : 1;
}
