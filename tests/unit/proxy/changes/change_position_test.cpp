// Positions of the change stream (proxy/changes/change_position.hpp): the
// text form encoded exactly, parsed back, and every malformed text refused.
#include <gtest/gtest.h>

#include "proxy/changes/change_position.hpp"

namespace sp::proxy::changes {
namespace {

TEST(ChangePosition, EncodesEveryBackendAndDomainInOrder) {
  ChangePosition p;
  p.backends["db1"].advance({0, 3308, 40});
  p.backends["db1"].advance({1, 5, 3});
  p.backends["db0"].advance({0, 3307, 81});
  p.backends["db2"];  // nothing read yet
  EXPECT_EQ(encodePosition(p), "db0:0-3307-81,db1:0-3308-40_1-5-3,db2:");
}

TEST(ChangePosition, ParsesWhatItEncodes) {
  auto p = parsePosition("db0:0-3307-81,db1:0-3308-40_1-5-3,db2:");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->backends.size(), 3u);
  EXPECT_EQ(p->backends.at("db1").by_domain.at(1), (StreamGtid{1, 5, 3}));
  EXPECT_TRUE(p->backends.at("db2").by_domain.empty());
  EXPECT_EQ(encodePosition(*p), "db0:0-3307-81,db1:0-3308-40_1-5-3,db2:");
  EXPECT_EQ(p->backends.at("db1").connectState(), "0-3308-40,1-5-3");
}

TEST(ChangePosition, RefusesMalformedText) {
  for (const char* bad : {"", "db0", ":0-1-2", "db0:0-1", "db0:0-1-", "db0:a-1-2", "db0:0-1-2,", "db0:0-1-2,,db1:",
                          "db0:0-1-2_", "db0:0-1-2_0-1-3", "db0:,db0:", "db 0:0-1-2", "db0:0-1-2;db1:",
                          "db0:-1-1-2", "db0:0-1-99999999999999999999", "db0:4294967296-1-2", "db0:0-1-2 ",
                          "db0:0x1-1-2", "db0:+1-1-2"}) {
    EXPECT_FALSE(parsePosition(bad)) << bad;
  }
}

TEST(ChangePosition, RefusesTooLongOrTooManyEntries) {
  std::string many;
  for (int i = 0; i <= static_cast<int>(kMaxPositionBackends); ++i) many += (i ? ",b" : "b") + std::to_string(i) + ":";
  auto r = parsePosition(many);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("more than"), std::string::npos);
  EXPECT_FALSE(parsePosition(std::string(kMaxPositionBytes + 1, 'a')));
  std::string domains = "db0:";
  for (int d = 0; d <= static_cast<int>(kMaxPositionDomains); ++d) domains += (d ? "_" : "") + std::to_string(d) + "-1-1";
  EXPECT_FALSE(parsePosition(domains));
}

TEST(ChangePosition, CoversComparesWithinADomain) {
  BackendGtids g;
  g.advance({0, 1, 10});
  EXPECT_TRUE(g.covers({0, 2, 10}));
  EXPECT_TRUE(g.covers({0, 1, 9}));
  EXPECT_FALSE(g.covers({0, 1, 11}));
  EXPECT_FALSE(g.covers({1, 1, 1}));
}

TEST(ChangePosition, GtidListOfTheServer) {
  auto g = parseGtidList("0-3307-5,1-2-3");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->connectState(), "0-3307-5,1-2-3");
  EXPECT_TRUE(parseGtidList("")->by_domain.empty());
  EXPECT_FALSE(parseGtidList("0-1-2,"));
}

}  // namespace
}  // namespace sp::proxy::changes
