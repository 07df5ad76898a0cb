// Binary result rows.
#include "protocol/binary_row.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;
using CT = ColumnType;

struct RowCase {
  const char* name;
  std::vector<BinaryType> types;
  BinaryRow row;
  const char* bytes;
};

const std::vector<RowCase>& rowCases() {
  static const std::vector<RowCase> cases = {
      {"no_columns", {}, {}, "00 00"},
      // Captured (cursor fetch of SELECT id, dtm6, tm FROM types): row 2, all but id NULL.
      {"captured_nulls", {{CT::kLong, false}, {CT::kDateTime, false}, {CT::kTime, false}},
       {int64_t{2}, NullValue{}, NullValue{}}, "00 18 02000000"},
      // Captured: row 3 of the same fetch.
      {"captured_datetime_time", {{CT::kLong, false}, {CT::kDateTime, false}, {CT::kTime, false}},
       {int64_t{3}, BinaryDateTime{2024, 1, 1, 10}, BinaryTime{}}, "00 00 03000000 07e80701010a0000 00"},
      {"six_columns_second_bitmap_byte",
       {{CT::kTiny, false}, {CT::kTiny, false}, {CT::kTiny, false}, {CT::kTiny, false},
        {CT::kTiny, false}, {CT::kTiny, false}, {CT::kVarString, false}},
       {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{6}, NullValue{}},
       "00 0001 01 02 03 04 05 06"},
      {"all_kinds",
       {{CT::kLongLong, true}, {CT::kDouble, false}, {CT::kFloat, false}, {CT::kNewDecimal, false},
        {CT::kBlob, false}, {CT::kNull, false}},
       {~uint64_t{0}, 0.5, -2.0f, std::string_view("1.5"), std::string_view(""), NullValue{}},
       "00 80 ffffffffffffffff 000000000000e03f 000000c0 03312e35 00"},
  };
  return cases;
}

TEST(BinaryRow, Encode) {
  for (const auto& c : rowCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    ASSERT_TRUE(encodeBinaryRow(c.row, c.types, out).has_value());
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(BinaryRow, Decode) {
  for (const auto& c : rowCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    ExactBuffer buf(in);
    auto row = decodeBinaryRow(buf.view(), c.types);
    ASSERT_TRUE(row.has_value()) << toString(row.error());
    EXPECT_EQ(*row, c.row);
  }
}

TEST(BinaryRow, EveryTruncationFails) {
  for (const auto& c : rowCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), [&](ByteView b) { return decodeBinaryRow(b, c.types); });
  }
}

TEST(BinaryRow, Malformed) {
  std::vector<BinaryType> one_int{{CT::kLong, false}};
  struct Bad {
    const char* name;
    const char* bytes;
    DecodeError error;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {"header_not_zero", "01 00 01000000", DecodeError::kProtocolValue},
           {"reserved_bit_0", "00 01 01000000", DecodeError::kProtocolValue},
           {"reserved_bit_1", "00 02 01000000", DecodeError::kProtocolValue},
           {"bit_after_last_column", "00 08 01000000", DecodeError::kProtocolValue},
           {"trailing_bytes", "00 00 01000000 00", DecodeError::kExtraBytes},
           {"null_value_trailing", "00 04 01000000", DecodeError::kExtraBytes},
       }) {
    SCOPED_TRACE(b.name);
    auto r = decodeBinaryRow(hex(b.bytes), one_int);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error(), b.error);
  }
  // A NULL-typed column must be flagged NULL: it has no value bytes to read.
  EXPECT_EQ(decodeBinaryRow(hex("00 00"), std::vector<BinaryType>{{CT::kNull, false}}).error(),
            DecodeError::kProtocolValue);
}

TEST(BinaryRow, EncodeErrorsAppendNothing) {
  std::vector<BinaryType> types{{CT::kTiny, false}, {CT::kLong, false}};
  Bytes out = hex("aa");
  EXPECT_FALSE(encodeBinaryRow(BinaryRow{int64_t{1}}, types, out).has_value());
  EXPECT_FALSE(encodeBinaryRow(BinaryRow{int64_t{1}, std::string_view("x")}, types, out).has_value());
  EXPECT_FALSE(encodeBinaryRow(BinaryRow{int64_t{1}, LongDataValue{}}, types, out).has_value());
  EXPECT_EQ(test::toHex(out), "aa");
}

TEST(BinaryRow, TypesOfColumns) {
  ColumnDefinition41 a;
  a.type = CT::kLongLong;
  a.flags = column_flag::kUnsigned;
  ColumnDefinition41 b;
  b.type = CT::kVarString;
  std::vector<ColumnDefinition41> columns{a, b};
  EXPECT_EQ(binaryTypesOf(columns),
            (std::vector<BinaryType>{{CT::kLongLong, true}, {CT::kVarString, false}}));
}

}  // namespace
}  // namespace sp::protocol
