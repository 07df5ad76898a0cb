#include "coord/base64.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

struct Case {
  std::string plain;
  std::string encoded;
};

// RFC 4648 section 10 test vectors, plus bytes that need the whole alphabet.
const Case kCases[] = {
    {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    {std::string("\xfb\xff\xbf", 3), "+/+/"}, {std::string("\0\0", 2), "AAA="},
};

TEST(Base64, EncodesRfcVectors) {
  for (const auto& c : kCases) EXPECT_EQ(base64Encode(c.plain), c.encoded) << c.encoded;
}

TEST(Base64, DecodesRfcVectors) {
  for (const auto& c : kCases) {
    auto d = base64Decode(c.encoded);
    ASSERT_TRUE(d) << c.encoded;
    EXPECT_EQ(*d, c.plain);
  }
}

TEST(Base64, RefusesWhatIsNotCanonicalBase64) {
  for (std::string bad : {"Zg=", "Zg", "Z===", "Zm9v!A==", "Zh==", "Zm9=", "=Zm9", "Zm=v", "Zm9v\n"}) {
    EXPECT_FALSE(base64Decode(bad)) << bad;
  }
}

}  // namespace
}  // namespace sp::coord
