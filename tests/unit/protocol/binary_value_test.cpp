// Binary-protocol values: wire bytes per type, and the text conversions.
#include "protocol/binary_value.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;

constexpr BinaryType T(ColumnType t, bool u = false) { return {t, u}; }

struct WireCase {
  const char* name;
  BinaryType type;
  BinaryValue value;
  const char* bytes;
};

const std::vector<WireCase>& wireCases() {
  static const std::string k300(300, 'z');
  static const std::vector<WireCase> cases = {
      {"tiny_negative", T(ColumnType::kTiny), int64_t{-128}, "80"},
      {"tiny_unsigned_max", T(ColumnType::kTiny, true), uint64_t{255}, "ff"},
      {"short_negative", T(ColumnType::kShort), int64_t{-2}, "feff"},
      {"short_unsigned", T(ColumnType::kShort, true), uint64_t{65535}, "ffff"},
      {"year", T(ColumnType::kYear, true), uint64_t{2024}, "e807"},
      {"int24_negative", T(ColumnType::kInt24), int64_t{-8388608}, "000080ff"},
      {"long_min", T(ColumnType::kLong), int64_t{-2147483648}, "00000080"},
      {"long_unsigned_max", T(ColumnType::kLong, true), uint64_t{4294967295}, "ffffffff"},
      {"longlong_min", T(ColumnType::kLongLong), std::numeric_limits<int64_t>::min(), "0000000000000080"},
      {"longlong_unsigned_max", T(ColumnType::kLongLong, true), ~uint64_t{0}, "ffffffffffffffff"},
      {"float", T(ColumnType::kFloat), 1.5f, "0000c03f"},
      {"double", T(ColumnType::kDouble), -0.1, "9a9999999999b9bf"},
      {"date", T(ColumnType::kDate), BinaryDateTime{2024, 2, 29}, "04 e807 02 1d"},
      {"date_zero", T(ColumnType::kDate), BinaryDateTime{}, "00"},
      {"datetime_seconds", T(ColumnType::kDateTime), BinaryDateTime{2024, 1, 1, 0, 0, 1}, "07 e807 01 01 00 00 01"},
      {"datetime_micro", T(ColumnType::kDateTime), BinaryDateTime{2024, 12, 31, 23, 59, 58, 123456},
       "0b e807 0c 1f 17 3b 3a 40e20100"},
      {"datetime_midnight_is_a_date", T(ColumnType::kDateTime), BinaryDateTime{1000, 1, 1}, "04 e803 01 01"},
      {"timestamp", T(ColumnType::kTimestamp), BinaryDateTime{2024, 6, 30, 12, 0, 0, 125000},
       "0b e807 06 1e 0c 00 00 48e80100"},
      {"time_zero", T(ColumnType::kTime), BinaryTime{}, "00"},
      {"time_negative", T(ColumnType::kTime), BinaryTime{true, 34, 22, 59, 59, 0}, "08 01 22000000 16 3b 3b"},
      {"time_micro", T(ColumnType::kTime), BinaryTime{false, 5, 3, 4, 5, 678901},
       "0c 00 05000000 03 04 05 f55b0a00"},
      {"time_negative_fraction_only", T(ColumnType::kTime), BinaryTime{true, 0, 0, 0, 0, 500000},
       "0c 01 00000000 00 00 00 20a10700"},
      {"newdecimal", T(ColumnType::kNewDecimal), std::string_view("-1.50"), "05 2d312e3530"},
      {"varchar_empty", T(ColumnType::kVarString), std::string_view(""), "00"},
      {"blob_binary", T(ColumnType::kBlob), std::string_view("\x00\xff\x01", 3), "03 00ff01"},
      {"string_300", T(ColumnType::kString), std::string_view(k300),
       nullptr},  // bytes built below: fc 2c01 + 300 x 'z'
      {"json", T(ColumnType::kJson), std::string_view("[]"), "02 5b5d"},
      {"bit", T(ColumnType::kBit, true), std::string_view("\x02\xaa", 2), "02 02aa"},
      {"enum", T(ColumnType::kEnum), std::string_view("bb"), "02 6262"},
  };
  return cases;
}

Bytes bytesOf(const WireCase& c) {
  if (c.bytes != nullptr) return hex(c.bytes);
  return test::concat({hex("fc 2c01"), Bytes(300, 'z')});
}

TEST(BinaryValue, Encode) {
  for (const auto& c : wireCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    ASSERT_TRUE(encodeBinaryValue(c.value, c.type, out).has_value());
    EXPECT_EQ(test::toHex(out), test::toHex(bytesOf(c)));
  }
}

TEST(BinaryValue, Decode) {
  for (const auto& c : wireCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = bytesOf(c);
    ExactBuffer buf(in);
    Reader r(buf.view());
    auto v = decodeBinaryValue(r, c.type);
    ASSERT_TRUE(v.has_value()) << toString(v.error());
    EXPECT_EQ(*v, c.value);
    EXPECT_TRUE(r.empty());
  }
}

TEST(BinaryValue, EveryTruncationFails) {
  for (const auto& c : wireCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(bytesOf(c), [&](ByteView b) {
      Reader r(b);
      return decodeBinaryValue(r, c.type);
    });
  }
}

TEST(BinaryValue, NullTypeReadsNothing) {
  Bytes in = hex("ff");
  Reader r(in);
  auto v = decodeBinaryValue(r, T(ColumnType::kNull));
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(isNull(*v));
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(BinaryValue, LongerDateLengthsThanNeededDecode) {
  // A client may send a DATE with 7 or 11 bytes; the value is the same.
  Bytes in = hex("0b e807 02 1d 00 00 00 00000000");
  Reader r(in);
  auto v = decodeBinaryValue(r, T(ColumnType::kDate));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, BinaryValue(BinaryDateTime{2024, 2, 29}));
}

TEST(BinaryValue, BadValuesAreProtocolErrors) {
  struct Bad {
    const char* name;
    BinaryType type;
    const char* bytes;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {"date_length_5", T(ColumnType::kDateTime), "05 e807 01 01 00"},
           {"time_length_7", T(ColumnType::kTime), "07 00 00000000 00 00"},
           {"time_negative_flag_2", T(ColumnType::kTime), "08 02 00000000 00 00 00"},
           {"unknown_type", T(static_cast<ColumnType>(0x20)), "00"},
           {"lenenc_null_marker", T(ColumnType::kVarString), "fb"},
       }) {
    SCOPED_TRACE(b.name);
    Bytes in = hex(b.bytes);
    Reader r(in);
    auto v = decodeBinaryValue(r, b.type);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error(), DecodeError::kProtocolValue);
  }
}

TEST(BinaryValue, EncodeRefusesValuesThatDoNotFitTheType) {
  struct Bad {
    const char* name;
    BinaryType type;
    BinaryValue value;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {"string_for_long", T(ColumnType::kLong), std::string_view("1")},
           {"tiny_too_big", T(ColumnType::kTiny), int64_t{128}},
           {"tiny_too_small", T(ColumnType::kTiny), int64_t{-129}},
           {"unsigned_tiny_too_big", T(ColumnType::kTiny, true), uint64_t{256}},
           {"negative_for_unsigned", T(ColumnType::kLong, true), int64_t{-1}},
           {"unsigned_above_signed_max", T(ColumnType::kLongLong), uint64_t{1} << 63},
           {"float_for_double", T(ColumnType::kDouble), 1.0f},
           {"double_for_float", T(ColumnType::kFloat), 1.0},
           {"time_for_date", T(ColumnType::kDate), BinaryTime{}},
           {"date_for_time", T(ColumnType::kTime), BinaryDateTime{}},
           {"int_for_string", T(ColumnType::kVarString), int64_t{1}},
           {"null", T(ColumnType::kLong), NullValue{}},
           {"long_data", T(ColumnType::kBlob), LongDataValue{}},
           {"unknown_type", T(static_cast<ColumnType>(0x20)), std::string_view("x")},
       }) {
    SCOPED_TRACE(b.name);
    Bytes out;
    auto r = encodeBinaryValue(b.value, b.type, out);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), DecodeError::kProtocolValue);
  }
  // The numeric value decides, not its C++ type: these fit.
  Bytes out;
  EXPECT_TRUE(encodeBinaryValue(uint64_t{127}, T(ColumnType::kTiny), out).has_value());
  EXPECT_TRUE(encodeBinaryValue(int64_t{255}, T(ColumnType::kTiny, true), out).has_value());
  EXPECT_EQ(test::toHex(out), "7fff");
}

TEST(BinaryValue, BinaryTypeOfColumn) {
  ColumnDefinition41 c;
  c.type = ColumnType::kLongLong;
  c.flags = column_flag::kUnsigned | column_flag::kNotNull;
  EXPECT_EQ(binaryTypeOf(c), T(ColumnType::kLongLong, true));
  c.flags = column_flag::kNotNull;
  EXPECT_EQ(binaryTypeOf(c), T(ColumnType::kLongLong, false));
}

}  // namespace
}  // namespace sp::protocol
