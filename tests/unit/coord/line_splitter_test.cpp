#include "coord/line_splitter.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

TEST(LineSplitter, LinesAcrossAppends) {
  LineSplitter s(100);
  s.append("{\"a\":1}\n{\"b\"");
  EXPECT_EQ(s.next(), "{\"a\":1}");
  EXPECT_EQ(s.next(), std::nullopt);
  s.append(":2}\r\n\n");
  EXPECT_EQ(s.next(), "{\"b\":2}");
  EXPECT_EQ(s.next(), "");
  EXPECT_EQ(s.next(), std::nullopt);
}

TEST(LineSplitter, OverflowOfAnUnfinishedLine) {
  LineSplitter s(4);
  s.append("abcd");
  EXPECT_FALSE(s.overflowed());
  s.append("e");
  EXPECT_TRUE(s.overflowed());
  s.append("\n");
  EXPECT_EQ(s.next(), "abcde");
  EXPECT_FALSE(s.overflowed());
}

}  // namespace
}  // namespace sp::coord
