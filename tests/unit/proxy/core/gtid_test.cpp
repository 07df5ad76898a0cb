// GTID parsing and whether a server's position covers a write.
#include "proxy/core/gtid.hpp"

#include <gtest/gtest.h>

namespace sp::proxy {
namespace {

TEST(Gtid, Parses) {
  auto g = parseGtid("0-3307-42");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->domain, 0u);
  EXPECT_EQ(g->server, 3307u);
  EXPECT_EQ(g->seq, 42u);
  EXPECT_TRUE(parseGtid(" 1-2-3\n"));
  for (const char* bad : {"", "0-1", "0-1-", "a-1-2", "0-1-2-3", "0--1-2", "0-1-2x", "-1-2-3"}) {
    EXPECT_FALSE(parseGtid(bad)) << bad;
  }
}

TEST(Gtid, PositionCoversItsDomainOnly) {
  const Gtid write{0, 3307, 100};
  EXPECT_TRUE(positionCovers("0-3307-100", write));
  EXPECT_TRUE(positionCovers("0-3407-101", write)) << "a promoted replica continues the domain's sequence";
  EXPECT_FALSE(positionCovers("0-3307-99", write));
  EXPECT_TRUE(positionCovers("1-5-7,0-3307-120", write));
  EXPECT_FALSE(positionCovers("1-5-700", write)) << "another domain says nothing of this one";
  EXPECT_FALSE(positionCovers("", write));
  EXPECT_FALSE(positionCovers("garbage,0-3307-200", write)) << "a position it cannot read covers nothing";
}

}  // namespace
}  // namespace sp::proxy

namespace sp::proxy {
namespace {

TEST(GtidPosition, ShortfallCountsWhatIsMissingPerDomain) {
  EXPECT_EQ(positionShortfall("0-1-10", "0-1-10"), 0u);
  EXPECT_EQ(positionShortfall("0-1-12", "0-1-10"), 0u);
  EXPECT_EQ(positionShortfall("0-1-7", "0-1-10"), 3u);
  // Another server id in the same domain compares by sequence number.
  EXPECT_EQ(positionShortfall("0-2-10", "0-1-10"), 0u);
  // A domain it lacks entirely counts whole.
  EXPECT_EQ(positionShortfall("0-1-10", "0-1-10,1-5-4"), 4u);
  EXPECT_EQ(positionShortfall("", "0-1-3"), 3u);
  EXPECT_EQ(positionShortfall("0-1-3", ""), 0u);
  EXPECT_FALSE(positionShortfall("0-1-x", "0-1-3"));
  EXPECT_FALSE(positionShortfall("0-1-3", "garbage"));
}

TEST(GtidPosition, CoversAll) {
  EXPECT_TRUE(positionCoversAll("0-1-10,1-2-5", "1-2-5,0-1-9"));
  EXPECT_FALSE(positionCoversAll("0-1-10", "0-1-10,1-2-1"));
  EXPECT_FALSE(positionCoversAll("bad", ""));
  auto parsed = parsePosition(" 0-1-10,1-2-5 ");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].domain, 1u);
  EXPECT_EQ((*parsed)[1].seq, 5u);
}

}  // namespace
}  // namespace sp::proxy
