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
