// The replication groups' roles in the SQLite cache (`cache:` in the
// config), one row per backend, written after every SWITCHOVER, FAILOVER
// and REJOIN and read at start-up: a restarted proxy writes to the primary
// it last switched to, not to the configuration's first one.
#pragma once
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "proxy/core/topology.hpp"

struct sqlite3;

namespace sp::proxy {

class TopologyStore {
 public:
  static std::expected<std::unique_ptr<TopologyStore>, std::string> open(const std::string& path);
  ~TopologyStore();
  TopologyStore(const TopologyStore&) = delete;
  TopologyStore& operator=(const TopologyStore&) = delete;

  std::expected<std::vector<GroupTopology>, std::string> load();
  // Empty on success, else the SQLite error.
  std::string save(const GroupTopology& group);

 private:
  explicit TopologyStore(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace sp::proxy
