#include "coord/ha_records.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

TEST(HaRecords, KeysSortInsideTheWatchedRange) {
  // Every proxy watches [prefix/fence/, prefix/map]: the ha/ keys must fall inside it.
  const std::string prefix = "/shardproxy/";
  for (const std::string& key : {haTopologyKey(prefix), haChangeKey(prefix), haLeaderKey(prefix), haAckKey(prefix, "p3")}) {
    EXPECT_GT(key, std::string("/shardproxy/fence/")) << key;
    EXPECT_LT(key, std::string("/shardproxy/map")) << key;
  }
  EXPECT_EQ(haTopologyKey("/shardproxy"), "/shardproxy/ha/topology");
  EXPECT_EQ(haAckKey("/sp//", "p1"), "/sp/ha/ack/p1");
}

TEST(HaRecords, ParsesKeys) {
  auto t = parseHaKey("/sp", "/sp/ha/topology");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, HaKeyRef::Kind::kTopology);
  auto a = parseHaKey("/sp", "/sp/ha/ack/proxy-2");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, HaKeyRef::Kind::kAck);
  EXPECT_EQ(a->proxy, "proxy-2");
  EXPECT_EQ(parseHaKey("/sp", "/sp/ha/leader")->kind, HaKeyRef::Kind::kLeader);
  EXPECT_EQ(parseHaKey("/sp", "/sp/ha/change")->kind, HaKeyRef::Kind::kChange);
  EXPECT_FALSE(parseHaKey("/sp", "/sp/ha/ack/"));
  EXPECT_FALSE(parseHaKey("/sp", "/sp/ha/other"));
  EXPECT_FALSE(parseHaKey("/sp", "/sp/map"));
  EXPECT_FALSE(parseHaKey("/sp", "/other/ha/topology"));
}

TEST(HaRecords, TopologyRoundTrips) {
  FleetTopologyRecord record;
  record.version = 7;
  record.published_by = "p2";
  record.groups.push_back({"db0", "r1", {"r2", "db0"}, {}, "0-1-40", 1764800000123, "switchover db0 -> r1 (admin:root)"});
  record.groups.push_back({"db1", "db1", {}, {"db1r1"}, "", 0, ""});
  auto decoded = decodeFleetTopology(encodeFleetTopology(record));
  ASSERT_TRUE(decoded) << decoded.error();
  EXPECT_EQ(decoded->version, 7u);
  EXPECT_EQ(decoded->published_by, "p2");
  ASSERT_EQ(decoded->groups.size(), 2u);
  EXPECT_EQ(decoded->groups[0], record.groups[0]);
  EXPECT_EQ(decoded->groups[1], record.groups[1]);
}

TEST(HaRecords, RefusesMalformedTopology) {
  EXPECT_FALSE(decodeFleetTopology("not json"));
  EXPECT_FALSE(decodeFleetTopology("{\"version\": 1}"));  // no groups
  auto no_primary = decodeFleetTopology(R"({"version": 1, "groups": [{"backend": "db0"}]})");
  ASSERT_FALSE(no_primary);
  EXPECT_NE(no_primary.error().find("primary"), std::string::npos);
  auto bad_list = decodeFleetTopology(R"({"groups": [{"backend": "db0", "primary": "db0", "replicas": "r1"}]})");
  ASSERT_FALSE(bad_list);
  EXPECT_NE(bad_list.error().find("replicas"), std::string::npos);
  EXPECT_FALSE(decodeFleetTopology(R"({"groups": [{"backend": "db0", "primary": "db0", "fenced": [1]}]})"));
  EXPECT_FALSE(decodeFleetTopology(R"({"version": -3, "groups": []})"));
}

TEST(HaRecords, RoleChangeRoundTripsAndIsChecked) {
  RoleChangeRecord change{"db0", "switchover", "p1", "admin:root", 5500};
  auto decoded = decodeRoleChange(encodeRoleChange(change));
  ASSERT_TRUE(decoded) << decoded.error();
  EXPECT_EQ(decoded->backend, "db0");
  EXPECT_EQ(decoded->kind, "switchover");
  EXPECT_EQ(decoded->proxy, "p1");
  EXPECT_EQ(decoded->who, "admin:root");
  EXPECT_EQ(decoded->hold_ms, 5500u);
  EXPECT_FALSE(decodeRoleChange(R"({"backend": "db0", "kind": "drop", "proxy": "p1"})"));
  EXPECT_FALSE(decodeRoleChange(R"({"backend": "db0", "kind": "failover"})"));
  EXPECT_FALSE(decodeRoleChange(R"({"backend": "db0", "kind": "failover", "proxy": "p1", "hold_ms": "x"})"));
}

}  // namespace
}  // namespace sp::coord
