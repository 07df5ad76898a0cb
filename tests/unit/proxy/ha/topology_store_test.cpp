// The roles in the SQLite cache: written and read back whole, one row per
// backend (a second save replaces the first).
#include "proxy/ha/topology_store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace sp::proxy {
namespace {

TEST(TopologyStore, SavesAndLoads) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sp_topology_" + std::to_string(::getpid()) + "/cache.sqlite");
  std::filesystem::remove_all(path.parent_path());
  {
    auto store = TopologyStore::open(path.string());
    ASSERT_TRUE(store) << store.error();
    auto empty = (*store)->load();
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->empty());
    GroupTopology g;
    g.backend = "db1";
    g.primary = "db1r1";
    g.replicas = {"db1r2"};
    g.fenced = {"db1"};
    g.promoted_at = "0-1-100";
    g.changed_unix_ms = 1234;
    g.change = "failover db1 -> db1r1 (auto_failover)";
    EXPECT_EQ((*store)->save(g), "");
    g.replicas = {"db1r2", "db1"};
    g.fenced.clear();
    EXPECT_EQ((*store)->save(g), "");
  }
  auto store = TopologyStore::open(path.string());
  ASSERT_TRUE(store) << store.error();
  auto rows = (*store)->load();
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  const auto& g = rows->front();
  EXPECT_EQ(g.primary, "db1r1");
  EXPECT_EQ(g.replicas, (std::vector<std::string>{"db1r2", "db1"}));
  EXPECT_TRUE(g.fenced.empty());
  EXPECT_EQ(g.promoted_at, "0-1-100");
  EXPECT_EQ(g.changed_unix_ms, 1234);
  EXPECT_EQ(g.change, "failover db1 -> db1r1 (auto_failover)");
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace sp::proxy
