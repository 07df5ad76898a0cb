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

namespace sp::protocol {
namespace {

// PASSWORD('app_pw') and PASSWORD('') in MariaDB 10.11.
TEST(NativePasswordHash, MatchesMariaDbPasswordFunction) {
  EXPECT_EQ(nativePasswordHash("app_pw"), "*95BE1A04B76EE9AB97CEE8436421F2D15539B738");
  EXPECT_EQ(nativePasswordHash(""), "");
}

TEST(NativePasswordHash, VerifiesWithTheHashAlone) {
  const std::string scramble = "abcdefghij0123456789";
  const std::string hash = nativePasswordHash("app_pw");
  EXPECT_TRUE(verifyNativePasswordHash(hash, scramble, nativePasswordResponse("app_pw", scramble)));
  std::string lower = hash;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_TRUE(verifyNativePasswordHash(lower, scramble, nativePasswordResponse("app_pw", scramble)));
  EXPECT_FALSE(verifyNativePasswordHash(hash, scramble, nativePasswordResponse("app_pX", scramble)));
  EXPECT_FALSE(verifyNativePasswordHash(hash, "abcdefghij012345678X", nativePasswordResponse("app_pw", scramble)));
  EXPECT_FALSE(verifyNativePasswordHash(hash, scramble, ""));
  EXPECT_FALSE(verifyNativePasswordHash(hash, scramble, std::string(19, 'x')));
  // The hash sent as the answer (a stolen config line) does not log in.
  EXPECT_FALSE(verifyNativePasswordHash(hash, scramble, hash.substr(1, 20)));
  EXPECT_FALSE(verifyNativePasswordHash("*XYZ", scramble, nativePasswordResponse("app_pw", scramble)));
  EXPECT_TRUE(verifyNativePasswordHash("", scramble, ""));
  EXPECT_FALSE(verifyNativePasswordHash("", scramble, nativePasswordResponse("x", scramble)));
}

}  // namespace
}  // namespace sp::protocol
