// libFuzzer target: the shard-map loader (conf/shard_map_file.* reads the
// YAML, routing's compileShardMap checks and compiles it) on arbitrary text
// with backends db0 and db1, including the issue report; an accepted map is then used to plan a few statements on
// every table it defines (what a reload does next). Seeds: conf/shard_map.yaml
// and tests/unit/routing/golden/shard_map.yaml.
// Invariants: no crash or sanitizer report; a rejected map has at least one
// issue.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "routing/plan.hpp"
#include "routing/map/shard_map.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sp::routing;
  static const std::vector<std::string> kBackends = {"db0", "db1"};
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto map = compileShardMap(text, kBackends);
  if (!map) {
    if (map.error().empty()) {
      std::fprintf(stderr, "shard map rejected without an issue\n");
      std::abort();
    }
    (void)formatShardMapIssues(map.error(), "fuzz.yaml");
    return 0;
  }
  PlannerInput input{.map = **map, .default_backend = "db0"};
  for (const TableRule& table : (*map)->tables()) {
    const std::string& name = table.name;
    const std::string& key = table.key;
    std::string months;
    if (table.month) months = " AND " + table.month->column + " BETWEEN '2025-01-01' AND '2025-03-01'";
    for (const std::string& sql :
         {"SELECT * FROM " + name + " WHERE " + key + " = 424242" + months,
          "SELECT COUNT(*) FROM " + name + " WHERE " + key + " IN (1, 2, 3, 18446744073709551615)" + months,
          "INSERT INTO " + name + " (" + key + ") VALUES (7), ('channel:9')",
          "DELETE FROM " + name + " WHERE " + key + " = 'x'"}) {
      (void)planQuery(sql, input);
    }
  }
  return 0;
}
