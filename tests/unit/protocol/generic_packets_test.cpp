// OK / ERR / EOF packets.
#include "protocol/generic_packets.hpp"

#include <gtest/gtest.h>

#include "protocol/constants.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;

struct OkCase {
  const char* name;
  uint32_t capabilities;
  uint8_t header;
  OkPacket message;
  const char* bytes;
  std::set<size_t> valid_prefixes;  // where the remaining fields are optional
};

const std::vector<OkCase>& okCases() {
  static const std::vector<OkCase> cases = {
      {"plain", 0, 0x00, {0, 0, status::kAutocommit, 0, "", ""}, "00 00 00 0200 0000", {}},
      {"info_without_session_track", 0, 0x00, {1, 0, status::kAutocommit, 0, "Rows matched: 1", ""},
       "00 01 00 0200 0000 0f 526f7773206d6174636865643a2031", {7}},
      {"multibyte_lenenc", 0, 0x00, {300, 0x10000, 0x0003, 2, "", ""},
       "00 fc2c01 fd000001 0300 0200", {}},
      {"session_state_changed", cap::kSessionTrack, 0x00,
       {0, 0, 0x4002, 0, "", std::string("\x01\x06\x05" "capdb", 8)},
       "00 00 00 0240 0000 00 08 0106056361706462", {}},
      {"session_track_info_only", cap::kSessionTrack, 0x00, {0, 0, 0x0002, 0, "abc", ""},
       "00 00 00 0200 0000 03616263", {7}},
      {"deprecate_eof_end_of_rows", cap::kDeprecateEof, 0xfe, {0, 0, 0x0022, 0, "", ""},
       "fe 00 00 2200 0000", {}},
  };
  return cases;
}

TEST(OkPacket, Encode) {
  for (const auto& c : okCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, c.capabilities, out, c.header);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(OkPacket, Decode) {
  for (const auto& c : okCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeOkPacket(ExactBuffer(in).view(), c.capabilities);
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(OkPacket, EveryTruncation) {
  for (const auto& c : okCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(
        hex(c.bytes), [&](ByteView b) { return decodeOkPacket(b, c.capabilities); }, c.valid_prefixes);
  }
}

TEST(OkPacket, Malformed) {
  EXPECT_EQ(decodeOkPacket(hex("01 00 00 0200 0000"), 0).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeOkPacket(hex("00 00 00 0200 0000 03616263 00"), 0).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeOkPacket(hex("00 00 00 0200 0000 05616263"), 0).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeOkPacket(hex("00 fb 00 0200 0000"), 0).error(), DecodeError::kProtocolValue);
}

struct ErrCase {
  const char* name;
  ErrPacket message;
  const char* bytes;
  std::set<size_t> valid_prefixes;
};

std::set<size_t> range(size_t from, size_t to) {
  std::set<size_t> s;
  for (size_t i = from; i < to; ++i) s.insert(i);
  return s;
}

const std::vector<ErrCase>& errCases() {
  static const std::vector<ErrCase> cases = {
      // '#' + 5 chars must be whole; code alone or a shorter message is still an ERR.
      {"with_sqlstate", {1146, "42S02", "no table"}, "ff 7a04 23 3432533032 6e6f207461626c65",
       [] { auto s = range(9, 17); s.insert(3); return s; }()},
      // Errors sent before the client said it speaks 4.1 carry no SQLSTATE.
      {"without_sqlstate", {1040, "", "Too many"}, "ff 1004 546f6f206d616e79", range(3, 11)},
      {"empty_message", {1064, "42000", ""}, "ff 2804 23 3432303030", {3}},
  };
  return cases;
}

TEST(ErrPacket, Encode) {
  for (const auto& c : errCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, out);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(ErrPacket, EncodeFixesSqlStateLength) {
  Bytes out;
  encode(ErrPacket{1105, "HY", "x"}, out);
  EXPECT_EQ(out, hex("ff 5104 23 4859303030 78"));
}

TEST(ErrPacket, Decode) {
  for (const auto& c : errCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeErrPacket(ExactBuffer(in).view());
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(ErrPacket, EveryTruncation) {
  for (const auto& c : errCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), decodeErrPacket, c.valid_prefixes);
  }
}

TEST(ErrPacket, WrongHeader) {
  EXPECT_EQ(decodeErrPacket(hex("00 7a04")).error(), DecodeError::kProtocolValue);
}

TEST(EofPacket, EncodeDecode) {
  const EofPacket m{1, 0x0022};
  Bytes out;
  encode(m, out);
  EXPECT_EQ(out, hex("fe 0100 2200"));
  Bytes in = hex("fe 0100 2200");
  auto d = decodeEofPacket(ExactBuffer(in).view());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, m);
  expectEveryPrefixFails(in, decodeEofPacket);
}

TEST(EofPacket, Malformed) {
  EXPECT_EQ(decodeEofPacket(hex("fe 0100 2200 00")).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeEofPacket(hex("ff 0100 2200")).error(), DecodeError::kProtocolValue);
}

TEST(PacketKinds, Classifiers) {
  EXPECT_TRUE(isEofPacket(hex("fe 0000 0200")));
  EXPECT_TRUE(isEofPacket(hex("fe 00 00 0200 0000")));  // DEPRECATE_EOF OK, 7 bytes
  EXPECT_FALSE(isEofPacket(hex("fe 0000000000000000")));  // 9 bytes: a row
  EXPECT_FALSE(isEofPacket(ByteView{}));
  EXPECT_TRUE(isErrPacket(hex("ff")));
  EXPECT_FALSE(isErrPacket(ByteView{}));
  EXPECT_TRUE(isOkPacket(hex("00")));
  EXPECT_FALSE(isOkPacket(hex("fe")));
}

}  // namespace
}  // namespace sp::protocol
