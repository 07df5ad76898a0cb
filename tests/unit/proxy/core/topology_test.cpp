// The replication groups' roles: from the configuration, restored from the
// SQLite cache only when the saved servers still exist, and the settings of
// a backend's pool after a switch (the new primary's address and account
// under the backend's name, the current replicas).
#include "conf/config.hpp"
#include "proxy/core/topology.hpp"

#include <gtest/gtest.h>

namespace sp::proxy {
namespace {

conf::Config group() {
  conf::Config c;
  conf::BackendConfig b;
  b.name = "db1";
  b.address = {"10.0.0.1", 3306};
  b.user = "proxy";
  b.password = "pw";
  b.min_connections = 4;
  b.replicas.push_back({"db1r1", {"10.0.0.2", 3306}, "", ""});
  b.replicas.push_back({"db1r2", {"10.0.0.3", 3306}, "other", "opw"});
  c.backends.push_back(b);
  return c;
}

TEST(Topology, FromTheConfiguration) {
  auto t = topologyFromConfig(group());
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].primary, "db1");
  EXPECT_EQ(t.groups[0].replicas, (std::vector<std::string>{"db1r1", "db1r2"}));
  EXPECT_TRUE(t.groups[0].fenced.empty());
}

TEST(Topology, PoolSettingsFollowThePrimary) {
  auto config = group();
  auto t = topologyFromConfig(config);
  auto& g = t.groups[0];
  g.primary = "db1r2";
  g.replicas = {"db1r1"};
  g.fenced = {"db1"};
  auto pool = primaryPoolConfig(config, t, "db1");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->name, "db1");  // plans and pools know it by the backend's name
  EXPECT_EQ(pool->address.host, "10.0.0.3");
  EXPECT_EQ(pool->user, "other");  // the server's own account
  EXPECT_EQ(pool->min_connections, 4u);
  ASSERT_EQ(pool->replicas.size(), 1u);  // the fenced old primary serves nothing
  EXPECT_EQ(pool->replicas[0].name, "db1r1");
  auto replicas = replicaLogins(config, t, "db1");
  ASSERT_EQ(replicas.size(), 1u);
  EXPECT_EQ(replicas[0].name, "db1r1");
  EXPECT_EQ(replicas[0].user, "proxy");
  EXPECT_FALSE(primaryPoolConfig(config, t, "nosuch"));
  // Back on the configured primary, with one replica fenced.
  g.primary = "db1";
  g.replicas = {"db1r2"};
  g.fenced = {"db1r1"};
  pool = primaryPoolConfig(config, t, "db1");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->address.host, "10.0.0.1");
  ASSERT_EQ(pool->replicas.size(), 1u);
  EXPECT_EQ(pool->replicas[0].name, "db1r2");
}

TEST(Topology, RestoredWhenItsServersStillExist) {
  auto config = group();
  GroupTopology saved;
  saved.backend = "db1";
  saved.primary = "db1r1";
  saved.replicas = {"db1"};
  saved.fenced = {};
  saved.change = "switchover db1 -> db1r1";
  std::vector<std::string> warnings;
  auto t = restoreTopology(config, {saved}, warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(t.groups[0].primary, "db1r1");
  // db1r2 was not in the saved group (added to the config since): a replica.
  EXPECT_EQ(t.groups[0].replicas, (std::vector<std::string>{"db1", "db1r2"}));
  EXPECT_EQ(t.groups[0].change, "switchover db1 -> db1r1");
}

TEST(Topology, NotRestoredWhenTheConfigNoLongerHasItsServers) {
  auto config = group();
  GroupTopology saved;
  saved.backend = "db1";
  saved.primary = "gone";
  saved.replicas = {"db1"};
  std::vector<std::string> warnings;
  auto t = restoreTopology(config, {saved}, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("server 'gone' is no longer in backends[db1]"), std::string::npos) << warnings[0];
  EXPECT_EQ(t.groups[0].primary, "db1");
  saved.primary = "db1r1";
  saved.replicas = {"db1r1"};
  warnings.clear();
  t = restoreTopology(config, {saved}, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("listed twice"), std::string::npos) << warnings[0];
  EXPECT_EQ(t.groups[0].primary, "db1");
}

TEST(Topology, ServerLogins) {
  auto config = group();
  EXPECT_TRUE(isServerOf(config.backends[0], "db1"));
  EXPECT_TRUE(isServerOf(config.backends[0], "db1r2"));
  EXPECT_FALSE(isServerOf(config.backends[0], "db2"));
  auto own = serverLogin(config.backends[0], "db1");
  ASSERT_TRUE(own);
  EXPECT_TRUE(own->replicas.empty());
  auto r = serverLogin(config.backends[0], "db1r1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "db1r1");
  EXPECT_EQ(r->address.host, "10.0.0.2");
  EXPECT_EQ(r->min_connections, 0u);
  EXPECT_FALSE(serverLogin(config.backends[0], "nope"));
}

}  // namespace
}  // namespace sp::proxy
