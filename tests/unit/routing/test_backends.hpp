// The backends the routing tests' shard maps name: one definition for every
// test file of routing_tests (they are compiled together in unity batches).
#pragma once
#include <string>
#include <vector>

namespace sp::routing {

inline const std::vector<std::string> kBackends = {"db0", "db1"};

}  // namespace sp::routing
