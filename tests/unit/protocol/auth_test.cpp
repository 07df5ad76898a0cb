// Password scrambles. Vectors computed independently with Python's hashlib
// from the formulas in the protocol docs; captured_test.cpp checks one against
// a login that a real MariaDB server accepted.
#include "protocol/auth.hpp"

#include <gtest/gtest.h>

#include <set>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::hex;

std::string str(const Bytes& b) { return std::string(b.begin(), b.end()); }

TEST(NativePassword, KnownVector) {
  EXPECT_EQ(nativePasswordResponse("secret", "abcdefghijklmnopqrst"),
            str(hex("8817c50fa779daef010ee7577825b0847df9842e")));
}

TEST(NativePassword, EmptyPasswordIsEmptyResponse) {
  EXPECT_EQ(nativePasswordResponse("", "abcdefghijklmnopqrst"), "");
  EXPECT_TRUE(verifyNativePassword("", "abcdefghijklmnopqrst", ""));
  EXPECT_FALSE(verifyNativePassword("", "abcdefghijklmnopqrst", "x"));
}

TEST(NativePassword, Verify) {
  std::string scramble = "abcdefghijklmnopqrst";
  std::string good = str(hex("8817c50fa779daef010ee7577825b0847df9842e"));
  EXPECT_TRUE(verifyNativePassword("secret", scramble, good));
  EXPECT_FALSE(verifyNativePassword("Secret", scramble, good));
  EXPECT_FALSE(verifyNativePassword("secret", "abcdefghijklmnopqrsu", good));
  EXPECT_FALSE(verifyNativePassword("secret", scramble, good.substr(0, 19)));
  EXPECT_FALSE(verifyNativePassword("secret", scramble, ""));
  std::string flipped = good;
  flipped[19] = static_cast<char>(flipped[19] ^ 1);
  EXPECT_FALSE(verifyNativePassword("secret", scramble, flipped));
}

TEST(CachingSha2, KnownVector) {
  EXPECT_EQ(cachingSha2Response("secret", "abcdefghijklmnopqrst"),
            str(hex("c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809")));
  EXPECT_EQ(cachingSha2Response("", "abcdefghijklmnopqrst"), "");
}

TEST(MakeScramble, LengthAlphabetAndVariety) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    std::string s = makeScramble();
    ASSERT_EQ(s.size(), kScrambleLength);
    for (char c : s) {
      EXPECT_GE(static_cast<unsigned char>(c), 0x21);
      EXPECT_LE(static_cast<unsigned char>(c), 0x7e);
    }
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 200u);  // a repeat among 94^20 values would mean a broken RNG
}

}  // namespace
}  // namespace sp::protocol
