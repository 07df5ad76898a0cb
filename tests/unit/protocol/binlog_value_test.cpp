// Column values of row images (protocol/binlog_value_codec.hpp) from exact
// bytes, every truncation of each, and the literals of decoded values.
#include <gtest/gtest.h>

#include "protocol/binlog_event.hpp"
#include "protocol/binlog_rows.hpp"
#include "protocol/binlog_value_codec.hpp"
#include "protocol/constants.hpp"
#include "tests/unit/protocol/test_util.hpp"

namespace sp::protocol {
namespace {

using test::hex;
using ValueKind = BinlogValue::Kind;

BinlogValue text(ValueKind kind, std::string t) {
  BinlogValue v;
  v.kind = kind;
  v.text = std::move(t);
  return v;
}
BinlogValue signedValue(int64_t i) {
  BinlogValue v;
  v.kind = ValueKind::kInt;
  v.i = i;
  return v;
}
BinlogValue unsignedValue(uint64_t u, ValueKind kind = ValueKind::kUInt) {
  BinlogValue v;
  v.kind = kind;
  v.u = u;
  return v;
}

struct ValueCase {
  const char* name;
  ColumnType type;
  uint16_t meta;
  bool is_unsigned;
  const char* bytes;
  BinlogValue expected;
};

const ValueCase kCases[] = {
    {"tiny signed", ColumnType::kTiny, 0, false, "80", signedValue(-128)},
    {"tiny unsigned", ColumnType::kTiny, 0, true, "ff", unsignedValue(255)},
    {"int24 signed", ColumnType::kInt24, 0, false, "000080", signedValue(-8388608)},
    {"long unsigned", ColumnType::kLong, 0, true, "ffffffff", unsignedValue(4294967295u)},
    {"longlong signed", ColumnType::kLongLong, 0, false, "fbffffffffffffff", signedValue(-5)},
    {"longlong unsigned max", ColumnType::kLongLong, 0, true, "ffffffffffffffff", unsignedValue(UINT64_MAX)},
    // DECIMAL(14,4): the server's documented example and its negative.
    {"decimal", ColumnType::kNewDecimal, 14 << 8 | 4, false, "810dfb38d204d2", text(ValueKind::kDecimal, "1234567890.1234")},
    {"decimal negative", ColumnType::kNewDecimal, 14 << 8 | 4, false, "7ef204c72dfb2d",
     text(ValueKind::kDecimal, "-1234567890.1234")},
    {"decimal zero", ColumnType::kNewDecimal, 5 << 8 | 2, false, "800000", text(ValueKind::kDecimal, "0.00")},
    {"decimal integer", ColumnType::kNewDecimal, 3 << 8 | 0, false, "83e7", text(ValueKind::kDecimal, "999")},
    {"varchar short", ColumnType::kVarchar, 20, false, "026869", text(ValueKind::kBytes, "hi")},
    {"varchar long length", ColumnType::kVarchar, 1200, false, "02006869", text(ValueKind::kBytes, "hi")},
    // CHAR(255) in utf8mb4: 1020 bytes; the two high length bits live in the type byte.
    {"char over 255 bytes", ColumnType::kString, 0xcefc, false, "02006869", text(ValueKind::kBytes, "hi")},
    {"char", ColumnType::kString, 0xfe14, false, "026869", text(ValueKind::kBytes, "hi")},
    {"enum in string", ColumnType::kString, 0xf701, false, "02", unsignedValue(2)},
    {"set in string", ColumnType::kString, 0xf801, false, "05", unsignedValue(5)},
    {"blob", ColumnType::kBlob, 2, false, "030000275c", text(ValueKind::kBytes, std::string("\0'\\", 3))},
    {"year", ColumnType::kYear, 0, true, "7c", text(ValueKind::kTemporal, "2024")},
    {"year zero", ColumnType::kYear, 0, true, "00", text(ValueKind::kTemporal, "0000")},
    {"date", ColumnType::kDate, 0, false, "5d550f", text(ValueKind::kTemporal, "1962-10-29")},
    {"time2", ColumnType::kTime2, 0, false, "800000", text(ValueKind::kTemporal, "00:00:00")},
    {"time2 negative second", ColumnType::kTime2, 0, false, "7fffff", text(ValueKind::kTemporal, "-00:00:01")},
    // -0.5 s at TIME(1): integer part -1, fraction 0x100 - 50.
    {"time2 negative fraction", ColumnType::kTime2, 1, false, "7fffffce", text(ValueKind::kTemporal, "-00:00:00.5")},
    {"time2 max", ColumnType::kTime2, 0, false, "b46efb", text(ValueKind::kTemporal, "838:59:59")},
    {"time2 micro", ColumnType::kTime2, 6, false, "800000000001", text(ValueKind::kTemporal, "00:00:00.000001")},
    {"timestamp2 zero", ColumnType::kTimestamp2, 0, false, "00000000", text(ValueKind::kTemporal, "0000-00-00 00:00:00")},
    {"timestamp2", ColumnType::kTimestamp2, 2, false, "6592008019", text(ValueKind::kTemporal, "2024-01-01 00:00:00.25")},
    {"timestamp", ColumnType::kTimestamp, 0, false, "01000000", text(ValueKind::kTemporal, "1970-01-01 00:00:01")},
    {"bit 10", ColumnType::kBit, 1 << 8 | 2, false, "02aa", unsignedValue(682, ValueKind::kBit)},
    {"bit 64", ColumnType::kBit, 8 << 8 | 0, false, "ffffffffffffffff", unsignedValue(UINT64_MAX, ValueKind::kBit)},
};

TEST(BinlogValue, DecodesEachTypeFromExactBytes) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    std::string bytes_text = c.bytes;
    if (bytes_text.size() % 2) bytes_text += "9";  // "6592008019" + "9": fraction byte 0x19 = 25
    auto bytes = hex(bytes_text);
    test::ExactBuffer buffer(bytes);
    Reader r(buffer.view());
    auto v = readBinlogValue(r, static_cast<uint8_t>(c.type), c.meta, c.is_unsigned);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, c.expected) << "got " << binlogValueLiteral(*v);
    EXPECT_TRUE(r.empty()) << "the value must use all of its bytes";
    for (size_t n = 0; n < bytes.size(); ++n) {
      test::ExactBuffer prefix(bytes, n);
      Reader pr(prefix.view());
      EXPECT_FALSE(readBinlogValue(pr, static_cast<uint8_t>(c.type), c.meta, c.is_unsigned).has_value())
          << "prefix of " << n << " bytes decoded";
    }
  }
}

TEST(BinlogValue, RefusesImpossibleMetadataAndValues) {
  auto decode = [](ColumnType type, uint16_t meta, const char* bytes) {
    auto b = hex(bytes);
    Reader r(b);
    return readBinlogValue(r, static_cast<uint8_t>(type), meta, false);
  };
  EXPECT_FALSE(decode(ColumnType::kNewDecimal, 0, "80").has_value());            // precision 0
  EXPECT_FALSE(decode(ColumnType::kNewDecimal, 66 << 8, "80").has_value());      // precision 66
  EXPECT_FALSE(decode(ColumnType::kNewDecimal, 3 << 8, "83e8").has_value());    // 1000 in a 3-digit group
  EXPECT_FALSE(decode(ColumnType::kBlob, 5, "00").has_value());                  // pack length 5
  EXPECT_FALSE(decode(ColumnType::kTime2, 7, "800000").has_value());            // fsp 7
  EXPECT_FALSE(decode(ColumnType::kDateTime2, 0, "0000000000").has_value());    // before the offset
  EXPECT_FALSE(decode(ColumnType::kBit, 0, "").has_value());                    // zero bytes
  EXPECT_FALSE(decode(ColumnType::kDecimal, 0, "00").has_value());              // pre-5.0 DECIMAL
}

TEST(BinlogValue, LiteralsReadBackAsTheSameValue) {
  EXPECT_EQ(binlogValueLiteral(BinlogValue{}), "NULL");
  EXPECT_EQ(binlogValueLiteral(signedValue(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(binlogValueLiteral(unsignedValue(UINT64_MAX)), "18446744073709551615");
  EXPECT_EQ(binlogValueLiteral(unsignedValue(682, ValueKind::kBit)), "682");
  BinlogValue d;
  d.kind = ValueKind::kDouble;
  d.d = 0.1;
  EXPECT_EQ(binlogValueLiteral(d), "1e-01");  // exponent form: a DOUBLE, not a DECIMAL
  d.d = 0.1f;                                 // a FLOAT column's value, widened
  EXPECT_EQ(binlogValueLiteral(d), "1.0000000149011612e-01");
  d.d = -1.7976931348623157e308;
  EXPECT_EQ(binlogValueLiteral(d), "-1.7976931348623157e+308");
  EXPECT_EQ(binlogValueLiteral(text(ValueKind::kDecimal, "-12.340")), "-12.340");
  EXPECT_EQ(binlogValueLiteral(text(ValueKind::kTemporal, "-838:59:59")), "'-838:59:59'");
  EXPECT_EQ(binlogValueLiteral(text(ValueKind::kBytes, std::string("\0'\\\xff", 4))), "X'00275CFF'");
  EXPECT_EQ(binlogValueLiteral(text(ValueKind::kBytes, "")), "X''");
}

TEST(BinlogPosition, OrdersFilesThenOffsets) {
  EXPECT_TRUE(binlogBefore({"mariadb-bin.000001", 900}, {"mariadb-bin.000002", 4}));
  EXPECT_TRUE(binlogBefore({"mariadb-bin.000002", 4}, {"mariadb-bin.000002", 5}));
  EXPECT_FALSE(binlogBefore({"mariadb-bin.000002", 5}, {"mariadb-bin.000002", 5}));
  EXPECT_TRUE(binlogBefore({"mariadb-bin.999999", 4}, {"mariadb-bin.1000000", 4}));
  EXPECT_EQ(toString(BinlogPosition{"mariadb-bin.000003", 1234}), "mariadb-bin.000003:1234");
}

TEST(BinlogChecksum, IsZlibCrc32) {
  EXPECT_EQ(binlogCrc32(asBytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(binlogCrc32({}), 0u);
}

}  // namespace
}  // namespace sp::protocol
