// CRC-32 and SHA-256 against reference values. CRC vectors were computed with
// Python's zlib.crc32 (the same function as MySQL CRC32()).
#include <gtest/gtest.h>

#include <string>

#include "routing/map/crc32.hpp"
#include "routing/map/sha256.hpp"

namespace sp::routing {
namespace {

struct CrcCase {
  std::string input;
  uint32_t expected;
};

std::string bytes0To255Times4() {
  std::string s;
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  }
  return s;
}

TEST(Crc32, MatchesZlibVectors) {
  const CrcCase cases[] = {
      {"", 0x00000000u},
      {"a", 0xe8b7be43u},
      {"abc", 0x352441c2u},
      {"123456789", 0xcbf43926u},
      {"channel:1", 0x809619a0u},
      {"The quick brown fox jumps over the lazy dog", 0x414fa339u},
      {bytes0To255Times4(), 0xb70b4c26u},
  };
  for (const auto& c : cases) EXPECT_EQ(crc32(c.input), c.expected) << "input size " << c.input.size();
}

TEST(Crc32, MatchesMariaDb) {
  // MariaDB 10.11.19 on the test cluster:
  //   SELECT CRC32(''), CRC32('a'), CRC32('123456789'), CRC32('channel:1'),
  //          CRC32(CONCAT('channel:', 18446744073709551615)),
  //          CRC32(CONCAT('channel:', 88001)) % 64, CRC32(CONCAT('channel:', 9223372036854775807)) % 64
  //   -> 0  3904355907  3421780262  2157320608  3378454856  60  30
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("a"), 3904355907u);
  EXPECT_EQ(crc32("123456789"), 3421780262u);
  EXPECT_EQ(crc32("channel:1"), 2157320608u);
  EXPECT_EQ(crc32("channel:18446744073709551615"), 3378454856u);
  EXPECT_EQ(crc32("channel:88001") % 64, 60u);
  EXPECT_EQ(crc32("channel:9223372036854775807") % 64, 30u);
}

TEST(Crc32, ChainingEqualsWholeAtEverySplit) {
  std::string text = bytes0To255Times4().substr(0, 300) + "channel:18446744073709551615";
  uint32_t whole = crc32(text);
  for (size_t split = 0; split <= text.size(); ++split) {
    uint32_t head = crc32(std::string_view(text).substr(0, split));
    uint32_t chained = crc32Update(head, text.data() + split, text.size() - split);
    ASSERT_EQ(chained, whole) << "split at " << split;
  }
}

TEST(Crc32, UnalignedStartsAgreeWithBytewiseReference) {
  std::string text = bytes0To255Times4();
  for (size_t offset = 0; offset < 16; ++offset) {
    std::string_view view = std::string_view(text).substr(offset, 100);
    uint32_t reference = 0xFFFFFFFFu;  // bit-at-a-time reference implementation
    for (unsigned char byte : view) {
      reference ^= byte;
      for (int bit = 0; bit < 8; ++bit) reference = (reference & 1u) ? (reference >> 1) ^ 0xEDB88320u : reference >> 1;
    }
    EXPECT_EQ(crc32(view), ~reference) << "offset " << offset;
  }
}

TEST(Crc32, FormatDecimal) {
  char buf[20];
  EXPECT_EQ(std::string(buf, formatDecimal(0, buf)), "0");
  EXPECT_EQ(std::string(buf, formatDecimal(7, buf)), "7");
  EXPECT_EQ(std::string(buf, formatDecimal(1000, buf)), "1000");
  EXPECT_EQ(std::string(buf, formatDecimal(18446744073709551615ull, buf)), "18446744073709551615");
}

TEST(Crc32, PrefixedKeyEqualsCrcOfConcatenation) {
  uint32_t prefix = crc32("channel:");
  EXPECT_EQ(crc32OfPrefixedKey(prefix, 1), 0x809619a0u);
  EXPECT_EQ(crc32OfPrefixedKey(prefix, 0), 0xf7912936u);
  EXPECT_EQ(crc32OfPrefixedKey(prefix, 18446744073709551615ull), 0xc95f2148u);
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples and lengths around the 55/56/64-byte padding edges.
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256Hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256Hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256Hex(std::string(1000, 'a')), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

}  // namespace
}  // namespace sp::routing
