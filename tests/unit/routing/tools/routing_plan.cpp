// Test helper: plans each stdin line (one SQL statement) against a shard map
// and prints one tab-separated line: kind, backend, physical table, SQL (or
// the refusal's name and message). Used by explain_partitions_test.py.
//   routing_plan <shard_map.yaml> <default_backend> <backend>...
#include <iostream>
#include <string>
#include <vector>

#include "routing/plan.hpp"

int main(int argc, char** argv) {
  using namespace sp::routing;
  if (argc < 4) {
    std::cerr << "usage: routing_plan SHARD_MAP DEFAULT_BACKEND BACKEND...\n";
    return 2;
  }
  std::vector<std::string> backends(argv + 3, argv + argc);
  auto map = loadShardMap(argv[1], backends);
  if (!map) {
    std::cerr << formatShardMapIssues(map.error(), argv[1]);
    return 1;
  }
  PlannerInput input{**map, argv[2], {}};
  input.allow_scatter = false;  // single-shard routes only: scatter plans are checked by scatter_diff
  std::string line;
  while (std::getline(std::cin, line)) {
    Plan plan = planQuery(line, input);
    if (plan.kind == PlanKind::kRefused) {
      std::cout << "refused\t" << routeErrorInfo(plan.refusal->code).name << "\t-\t" << plan.refusal->message << "\n";
      continue;
    }
    const RouteTarget& t = plan.targets[0];
    std::cout << (plan.kind == PlanKind::kRoute ? "route" : "passthrough") << "\t" << t.backend << "\t"
              << (t.physical_table.empty() ? "-" : t.physical_table) << "\t" << t.sql << "\n";
  }
  return 0;
}
