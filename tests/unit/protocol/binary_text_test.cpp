// Binary values <-> the text-protocol rendering, and the routing description
// of parameters. The FLOAT/DOUBLE expectations are what MariaDB 10.11.19 printed
// through the text protocol for the same values stored in FLOAT / DOUBLE
// columns (and for DOUBLE expressions), observed with the `mariadb` client.
#include <gtest/gtest.h>

#include "protocol/binary_value.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

ColumnDefinition41 col(ColumnType type, uint16_t flags = 0, uint8_t decimals = 0, uint32_t length = 0) {
  ColumnDefinition41 c;
  c.type = type;
  c.flags = flags;
  c.decimals = decimals;
  c.column_length = length;
  return c;
}

constexpr uint8_t kNotFixed = 31;

struct FloatCase {
  float value;
  const char* text;
};

TEST(BinaryText, FloatLikeMariadb) {
  // FLOAT prints FLT_DIG (6) significant digits, not the shortest round trip.
  for (const FloatCase& c : std::initializer_list<FloatCase>{
           {16777216.0f, "16777200"}, {0.1f, "0.1"}, {0.333333333f, "0.333333"},
           {123456.7f, "123457"}, {1234567.0f, "1234570"}, {0.00001234f, "0.00001234"},
           {1e-15f, "0.000000000000001"}, {1.5e15f, "1.5e15"}, {1e16f, "1e16"},
           {123456789012345.67f, "123457000000000"}, {3.4e38f, "3.4e38"}, {1e-5f, "0.00001"},
           {0.0001f, "0.0001"}, {100.0f, "100"}, {7e-45f, "7.00649e-45"}, {0.1234567f, "0.123457"},
           {1234567.8f, "1234570"}, {1.234567e-15f, "0.00000000000000123457"}, {1e-16f, "1e-16"},
           {-1.23456e-5f, "-0.0000123456"}, {1234560.0f, "1234560"}, {-0.0f, "0"},
           {999999.5f, "1000000"}, {0.000001f, "0.000001"}, {1e-7f, "0.0000001"},
           {3.14159f, "3.14159"}, {-1.5e38f, "-1.5e38"}, {0.0f, "0"},
           // Exact ties at the 6th digit round half to even, as MariaDB's dtoa does.
           {1234565.0f, "1234560"}, {1234575.0f, "1234580"}, {8388609.0f, "8388610"},
           {0.5f, "0.5"}, {2.5e-5f, "0.000025"},
       }) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(toText(c.value, col(ColumnType::kFloat, 0, kNotFixed)), c.text);
  }
}

struct DoubleCase {
  double value;
  const char* text;
};

TEST(BinaryText, DoubleLikeMariadb) {
  // DOUBLE prints the shortest round-trip digits, in plain notation for
  // decimal exponents -14..15 (or when digits follow the point), else d.ddde[-]X.
  for (const DoubleCase& c : std::initializer_list<DoubleCase>{
           {16777216, "16777216"}, {0.1, "0.1"}, {0.333333333, "0.333333333"}, {123456.7, "123456.7"},
           {1.2345678901234567e-5, "0.000012345678901234568"}, {1e-14, "0.00000000000001"},
           {1e-15, "0.000000000000001"}, {1.5e15, "1.5e15"}, {1e16, "1e16"},
           {1234567890123456.7, "1234567890123456.8"},
           {1.7976931348623157e308, "1.7976931348623157e308"}, {-1e-5, "-0.00001"},
           {12345678901234567.0, "1.2345678901234568e16"}, {2.5e-300, "2.5e-300"}, {4.9e-324, "5e-324"},
           {0.1 + 0.2, "0.30000000000000004"}, {1e15, "1e15"},
           {123456789012345678.0, "1.2345678901234568e17"},
           {1.2345678901234567e-15, "0.0000000000000012345678901234568"}, {1e-16, "1e-16"},
           {1234567890123456.0, "1.234567890123456e15"}, {-0.0, "0"},
           {9007199254740993.0, "9.007199254740992e15"}, {1e22, "1e22"}, {100, "100"},
           {1e300, "1e300"}, {123456789012345680000.0, "1.2345678901234568e20"},
           // FLOAT column values read as DOUBLE (f * 1e0):
           {double{0.1f}, "0.10000000149011612"}, {double{1.5e15f}, "1.500000014041088e15"},
           {double{3.4e38f}, "3.3999999521443642e38"}, {double{1e-15f}, "0.0000000000000010000000036274937"},
       }) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(toText(c.value, col(ColumnType::kDouble, 0, kNotFixed)), c.text);
  }
}

TEST(BinaryText, FixedDecimalsFloatingPoint) {
  EXPECT_EQ(toText(2.5, col(ColumnType::kDouble, 0, 3)), "2.500");
  EXPECT_EQ(toText(-0.001, col(ColumnType::kDouble, 0, 3)), "-0.001");
  EXPECT_EQ(toText(12345.678, col(ColumnType::kDouble, 0, 3)), "12345.678");
  EXPECT_EQ(toText(3.14159f, col(ColumnType::kFloat, 0, 2)), "3.14");
}

struct TextCase {
  const char* name;
  ColumnDefinition41 column;
  BinaryValue value;
  const char* text;  // nullptr: NULL
};

const std::vector<TextCase>& textCases() {
  using CT = ColumnType;
  namespace f = column_flag;
  static const std::vector<TextCase> cases = {
      {"null", col(CT::kLong), NullValue{}, nullptr},
      {"int_negative", col(CT::kLong), int64_t{-2147483648}, "-2147483648"},
      {"bigint_unsigned_max", col(CT::kLongLong, f::kUnsigned), ~uint64_t{0}, "18446744073709551615"},
      {"zerofill", col(CT::kLong, f::kUnsigned | f::kZerofill, 0, 6), uint64_t{42}, "000042"},
      {"zerofill_wider_than_width", col(CT::kLong, f::kUnsigned | f::kZerofill, 0, 6), uint64_t{1234567},
       "1234567"},
      {"year_zero", col(CT::kYear, f::kUnsigned | f::kZerofill, 0, 4), uint64_t{0}, "0000"},
      {"year", col(CT::kYear, f::kUnsigned | f::kZerofill, 0, 4), uint64_t{1901}, "1901"},
      {"date", col(CT::kDate), BinaryDateTime{2024, 2, 29}, "2024-02-29"},
      {"date_zero", col(CT::kDate), BinaryDateTime{}, "0000-00-00"},
      {"datetime", col(CT::kDateTime), BinaryDateTime{2024, 12, 31, 23, 59, 58}, "2024-12-31 23:59:58"},
      {"datetime_zero", col(CT::kDateTime), BinaryDateTime{}, "0000-00-00 00:00:00"},
      {"datetime6", col(CT::kDateTime, 0, 6), BinaryDateTime{2024, 1, 1, 0, 0, 0, 1},
       "2024-01-01 00:00:00.000001"},
      {"datetime6_whole_second", col(CT::kDateTime, 0, 6), BinaryDateTime{2024, 1, 1, 10},
       "2024-01-01 10:00:00.000000"},
      {"timestamp3", col(CT::kTimestamp, 0, 3), BinaryDateTime{2024, 6, 30, 12, 0, 0, 125000},
       "2024-06-30 12:00:00.125"},
      {"datetime_any_decimals", col(CT::kDateTime, 0, 31), BinaryDateTime{2024, 6, 30, 12, 0, 0, 5},
       "2024-06-30 12:00:00.000005"},
      {"time_negative_max", col(CT::kTime), BinaryTime{true, 34, 22, 59, 59}, "-838:59:59"},
      {"time_zero", col(CT::kTime), BinaryTime{}, "00:00:00"},
      {"time6_negative_fraction", col(CT::kTime, 0, 6), BinaryTime{true, 0, 0, 0, 0, 500000},
       "-00:00:00.500000"},
      {"time6", col(CT::kTime, 0, 6), BinaryTime{false, 5, 3, 4, 5, 678901}, "123:04:05.678901"},
      {"decimal", col(CT::kNewDecimal, 0, 4), std::string_view("-12345678901234.5678"),
       "-12345678901234.5678"},
      {"string", col(CT::kVarString), std::string_view("\xc3\xbc"), "\xc3\xbc"},
  };
  return cases;
}

TEST(BinaryText, ToText) {
  for (const auto& c : textCases()) {
    SCOPED_TRACE(c.name);
    auto t = toText(c.value, c.column);
    if (c.text == nullptr) {
      EXPECT_FALSE(t.has_value());
    } else {
      ASSERT_TRUE(t.has_value());
      EXPECT_EQ(*t, c.text);
    }
  }
  EXPECT_FALSE(toText(LongDataValue{}, col(ColumnType::kBlob)).has_value());
}

TEST(BinaryText, ZerofillWidthIsCapped) {
  auto t = toText(uint64_t{7}, col(ColumnType::kLong, column_flag::kUnsigned | column_flag::kZerofill, 0,
                                   0xffffffff));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->size(), 255u);
  EXPECT_EQ(t->back(), '7');
}

TEST(BinaryText, FromText) {
  for (const auto& c : textCases()) {
    SCOPED_TRACE(c.name);
    std::optional<std::string_view> text;
    if (c.text != nullptr) text = c.text;
    auto v = fromText(text, c.column);
    ASSERT_TRUE(v.has_value()) << toString(v.error());
    EXPECT_EQ(*v, c.value);
  }
  EXPECT_EQ(fromText("0.30000000000000004", col(ColumnType::kDouble, 0, kNotFixed)).value(),
            BinaryValue(0.1 + 0.2));
  EXPECT_EQ(fromText("3.14159", col(ColumnType::kFloat, 0, kNotFixed)).value(), BinaryValue(3.14159f));
  EXPECT_EQ(fromText("-128", col(ColumnType::kTiny)).value(), BinaryValue(int64_t{-128}));
  EXPECT_EQ(fromText("2024-03-01 00:00:00.5", col(ColumnType::kDateTime, 0, 1)).value(),
            BinaryValue(BinaryDateTime{2024, 3, 1, 0, 0, 0, 500000}));
}

TEST(BinaryText, FromTextRefusesWhatIsNotAValueOfTheColumn) {
  using CT = ColumnType;
  struct Bad {
    const char* text;
    ColumnDefinition41 column;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {"abc", col(CT::kLong)}, {"", col(CT::kLong)}, {"12x", col(CT::kLong)},
           {"128", col(CT::kTiny)}, {"-1", col(CT::kTiny, column_flag::kUnsigned)},
           {"18446744073709551616", col(CT::kLongLong, column_flag::kUnsigned)},
           {"1.5", col(CT::kLong)}, {"x", col(CT::kDouble)}, {"2024-1-01", col(CT::kDate)},
           {"2024-01-01x", col(CT::kDate)}, {"2024-01-01 1:00:00", col(CT::kDateTime)},
           {"2024-01-01 10:00:00.", col(CT::kDateTime)},
           {"2024-01-01 10:00:00.1234567", col(CT::kDateTime)}, {"1:00:00", col(CT::kTime)},
           {"10:00", col(CT::kTime)}, {"-", col(CT::kTime)}, {"x", col(static_cast<CT>(0x20))},
       }) {
    SCOPED_TRACE(b.text);
    auto v = fromText(std::string_view(b.text), b.column);
    ASSERT_FALSE(v.has_value());
    EXPECT_EQ(v.error(), DecodeError::kProtocolValue);
  }
}

TEST(BinaryText, DescribeParam) {
  using K = ParamDescription::Kind;
  using CT = ColumnType;
  struct Case {
    const char* name;
    BinaryValue value;
    BinaryType type;
    ParamDescription expected;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"null", NullValue{}, {CT::kLong, false}, {}},
           {"signed", int64_t{-5}, {CT::kTiny, false}, {K::kSigned, -5, 0, 0, ""}},
           {"unsigned_max", ~uint64_t{0}, {CT::kLongLong, true}, {K::kUnsigned, 0, ~uint64_t{0}, 0, ""}},
           {"float", 1.5f, {CT::kFloat, false}, {K::kDouble, 0, 0, 1.5, ""}},
           {"double", -0.25, {CT::kDouble, false}, {K::kDouble, 0, 0, -0.25, ""}},
           {"date", BinaryDateTime{2024, 2, 29}, {CT::kDate, false}, {K::kString, 0, 0, 0, "2024-02-29"}},
           {"datetime", BinaryDateTime{2024, 3, 1, 13, 14, 15}, {CT::kDateTime, false},
            {K::kString, 0, 0, 0, "2024-03-01 13:14:15"}},
           {"datetime_date_only", BinaryDateTime{2024, 3, 1}, {CT::kDateTime, false},
            {K::kString, 0, 0, 0, "2024-03-01 00:00:00"}},
           {"timestamp_micro", BinaryDateTime{2024, 3, 1, 0, 0, 0, 120}, {CT::kTimestamp, false},
            {K::kString, 0, 0, 0, "2024-03-01 00:00:00.000120"}},
           {"time", BinaryTime{true, 1, 2, 3, 4, 0}, {CT::kTime, false}, {K::kString, 0, 0, 0, "-26:03:04"}},
           {"decimal", std::string_view("12.50"), {CT::kNewDecimal, false}, {K::kDecimal, 0, 0, 0, "12.50"}},
           {"string", std::string_view("a\0b", 3), {CT::kString, false},
            {K::kString, 0, 0, 0, std::string("a\0b", 3)}},
       }) {
    SCOPED_TRACE(c.name);
    auto d = describeParam(c.value, c.type);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, c.expected);
  }
  EXPECT_FALSE(describeParam(LongDataValue{}, {CT::kBlob, false}).has_value());
}

}  // namespace
}  // namespace sp::protocol
