// A problem found in a config or shard-map file, as the loaders report it.
// Its own header so that code reading or reporting only that includes only this.
#pragma once
#include <string>
#include <vector>

namespace sp::conf {

// One problem found in a config file: the key path (e.g. "backends[1].address"),
// the 1-based line in the file when known (0 otherwise), and what is wrong.
struct ConfigIssue {
  std::string path;
  int line = 0;
  std::string message;
};
using ConfigIssues = std::vector<ConfigIssue>;

}  // namespace sp::conf
