// Reader / Writer / lenenc: exact bytes both ways and every truncation.
#include "protocol/wire.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::hex;

struct LenencCase {
  const char* name;
  uint64_t value;
  const char* bytes;
};

const LenencCase kLenencCases[] = {
    {"zero", 0, "00"},
    {"one_byte_max", 250, "fa"},
    {"two_byte_min", 251, "fcfb00"},
    {"two_byte_max", 0xffff, "fcffff"},
    {"three_byte_min", 0x10000, "fd000001"},
    {"three_byte_max", 0xffffff, "fdffffff"},
    {"eight_byte_min", 0x1000000, "fe0000000100000000"},
    {"eight_byte_max", std::numeric_limits<uint64_t>::max(), "feffffffffffffffff"},
};

TEST(Lenenc, Encode) {
  for (const auto& c : kLenencCases) {
    SCOPED_TRACE(c.name);
    Bytes out;
    Writer(out).lenenc(c.value);
    EXPECT_EQ(out, hex(c.bytes));
    EXPECT_EQ(lenencSize(c.value), out.size());
  }
}

TEST(Lenenc, Decode) {
  for (const auto& c : kLenencCases) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    ExactBuffer buf(in);
    Reader r(buf.view());
    auto v = r.lenenc();
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, c.value);
    EXPECT_TRUE(r.empty());
  }
}

TEST(Lenenc, EveryTruncationIsIncomplete) {
  for (const auto& c : kLenencCases) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    for (size_t n = 0; n < in.size(); ++n) {
      ExactBuffer buf(in, n);
      Reader r(buf.view());
      auto v = r.lenenc();
      ASSERT_FALSE(v.has_value()) << n;
      EXPECT_EQ(v.error(), DecodeError::kIncomplete);
    }
  }
}

TEST(Lenenc, NullAndErrMarkersAreNotLengths) {
  for (uint8_t marker : {uint8_t{0xfb}, uint8_t{0xff}}) {
    Bytes in{marker, 0, 0, 0, 0, 0, 0, 0, 0};
    Reader r(in);
    auto v = r.lenenc();
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error(), DecodeError::kProtocolValue);
  }
}

TEST(Wire, FixedIntegersEncode) {
  Bytes out;
  Writer w(out);
  w.u8(0x01);
  w.u16(0x0302);
  w.u24(0x060504);
  w.u32(0x0a090807);
  w.u64(0x1211100f0e0d0c0bull);
  EXPECT_EQ(out, hex("01 0203 040506 0708090a 0b0c0d0e0f101112"));
}

TEST(Wire, FixedIntegersDecode) {
  Bytes in = hex("01 0203 040506 0708090a 0b0c0d0e0f10 0b0c0d0e0f101112");
  ExactBuffer buf(in);
  Reader r(buf.view());
  EXPECT_EQ(r.u8().value(), 0x01);
  EXPECT_EQ(r.u16().value(), 0x0302);
  EXPECT_EQ(r.u24().value(), 0x060504u);
  EXPECT_EQ(r.u32().value(), 0x0a090807u);
  EXPECT_EQ(r.u48().value(), 0x100f0e0d0c0bull);
  EXPECT_EQ(r.u64().value(), 0x1211100f0e0d0c0bull);
  EXPECT_TRUE(r.expectEnd().has_value());
}

TEST(Wire, FixedIntegersTruncated) {
  Bytes in = hex("0102030405060708");
  for (size_t n = 0; n < 8; ++n) {
    ExactBuffer buf(in, n);
    if (n < 2) {
      EXPECT_FALSE(Reader(buf.view()).u16().has_value());
    }
    if (n < 3) {
      EXPECT_FALSE(Reader(buf.view()).u24().has_value());
    }
    if (n < 4) {
      EXPECT_FALSE(Reader(buf.view()).u32().has_value());
    }
    if (n < 6) {
      EXPECT_FALSE(Reader(buf.view()).u48().has_value());
    }
    EXPECT_FALSE(Reader(buf.view()).u64().has_value());
  }
  Reader empty(ByteView{});
  EXPECT_EQ(empty.u8().error(), DecodeError::kIncomplete);
}

TEST(Wire, StringsEncode) {
  Bytes out;
  Writer w(out);
  w.lenencString("abc");
  w.nulString("de");
  w.raw(std::string_view("f"));
  w.zeros(2);
  w.lenencString("");
  EXPECT_EQ(out, hex("03616263 646500 66 0000 00"));
}

TEST(Wire, StringsDecode) {
  Bytes in = hex("03616263 646500 00 66 6768");
  ExactBuffer buf(in);
  Reader r(buf.view());
  EXPECT_EQ(r.lenencString().value(), "abc");
  EXPECT_EQ(r.nulString().value(), "de");
  EXPECT_EQ(r.nulString().value(), "");
  EXPECT_EQ(r.fixed(1).value(), "f");
  EXPECT_EQ(r.position(), 9u);
  EXPECT_EQ(r.remaining(), 2u);
  EXPECT_EQ(r.expectEnd().error(), DecodeError::kExtraBytes);
  EXPECT_EQ(r.restString(), "gh");
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.restString(), "");
}

TEST(Wire, LenencStringLongerThanInput) {
  Bytes in = hex("05 61626364");
  Reader r(in);
  EXPECT_EQ(r.lenencString().error(), DecodeError::kIncomplete);
  // A 64-bit length near 2^64 must not wrap the bounds check.
  Bytes huge = hex("feffffffffffffffff 00");
  Reader h(huge);
  EXPECT_EQ(h.lenencString().error(), DecodeError::kIncomplete);
}

TEST(Wire, NulStringWithoutTerminator) {
  Bytes in = hex("616263");
  ExactBuffer buf(in);
  Reader r(buf.view());
  EXPECT_EQ(r.nulString().error(), DecodeError::kIncomplete);
  EXPECT_EQ(r.position(), 0u);
}

TEST(Wire, SkipAndFixedBounds) {
  Bytes in = hex("010203");
  ExactBuffer buf(in);
  Reader r(buf.view());
  EXPECT_EQ(r.skip(4).error(), DecodeError::kIncomplete);
  EXPECT_EQ(r.fixed(4).error(), DecodeError::kIncomplete);
  EXPECT_TRUE(r.skip(3).has_value());
  EXPECT_TRUE(r.expectEnd().has_value());
  EXPECT_EQ(r.fixed(1).error(), DecodeError::kIncomplete);
}

TEST(Wire, ErrorNames) {
  EXPECT_EQ(toString(DecodeError::kIncomplete), "incomplete message");
  EXPECT_EQ(toString(DecodeError::kProtocolValue), "protocol value error");
  EXPECT_EQ(toString(DecodeError::kExtraBytes), "extra bytes after message");
  EXPECT_EQ(toString(DecodeError::kTooLarge), "message too large");
}

}  // namespace
}  // namespace sp::protocol
