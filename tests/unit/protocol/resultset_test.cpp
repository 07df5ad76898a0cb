// Column count, ColumnDefinition41 and text rows.
#include "protocol/resultset.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::expectEveryPrefixFails;
using test::hex;

struct ColumnCase {
  const char* name;
  uint32_t mariadb_capabilities;
  ColumnDefinition41 message;
  const char* bytes;
};

ColumnDefinition41 column(std::string table, std::string org_table, std::string name,
                          std::string org_name, uint16_t charset, uint32_t length, ColumnType type,
                          uint16_t flags, uint8_t decimals, std::string ext = "") {
  ColumnDefinition41 c;
  c.schema = "capdb";
  c.table = std::move(table);
  c.org_table = std::move(org_table);
  c.name = std::move(name);
  c.org_name = std::move(org_name);
  c.extended_type_info = std::move(ext);
  c.character_set = charset;
  c.column_length = length;
  c.type = type;
  c.flags = flags;
  c.decimals = decimals;
  return c;
}

const std::vector<ColumnCase>& columnCases() {
  static const std::vector<ColumnCase> cases = {
      {"int_primary_key", 0,
       column("t", "t", "id", "id", 63, 11, ColumnType::kLong, 0x4203, 0),
       "03646566 056361706462 0174 0174 026964 026964 0c 3f00 0b000000 03 0342 00 0000"},
      {"aliases_decimal", 0,
       column("a", "t", "x", "id", 63, 12, ColumnType::kNewDecimal,
              column_flag::kNum | column_flag::kBinary, 2),
       "03646566 056361706462 0161 0174 0178 026964 0c 3f00 0c000000 f6 8080 02 0000"},
      {"mariadb_extended_type_info", mariadb_cap::kExtendedTypeInfo,
       column("t", "t", "j", "j", 45, 0xffffffff, ColumnType::kBlob, column_flag::kBlob, 0,
              std::string("\x01\x04json", 6)),
       "03646566 056361706462 0174 0174 016a 016a 06 01046a736f6e 0c 2d00 ffffffff fc 1000 00 0000"},
  };
  return cases;
}

TEST(ColumnDefinition41, Encode) {
  for (const auto& c : columnCases()) {
    SCOPED_TRACE(c.name);
    Bytes out;
    encode(c.message, out, c.mariadb_capabilities);
    EXPECT_EQ(test::toHex(out), test::toHex(hex(c.bytes)));
  }
}

TEST(ColumnDefinition41, Decode) {
  for (const auto& c : columnCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto m = decodeColumnDefinition41(ExactBuffer(in).view(), c.mariadb_capabilities);
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    EXPECT_EQ(*m, c.message);
  }
}

TEST(ColumnDefinition41, EveryTruncationFails) {
  for (const auto& c : columnCases()) {
    SCOPED_TRACE(c.name);
    expectEveryPrefixFails(hex(c.bytes), [&](ByteView b) {
      return decodeColumnDefinition41(b, c.mariadb_capabilities);
    });
  }
}

TEST(ColumnDefinition41, FieldListDefaultValueIsTolerated) {
  Bytes base = hex(columnCases()[0].bytes);
  for (const char* tail : {"0130", "fb", "00"}) {
    SCOPED_TRACE(tail);
    Bytes in = test::concat({base, hex(tail)});
    auto m = decodeColumnDefinition41(ExactBuffer(in).view());
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(*m, columnCases()[0].message);
  }
  EXPECT_EQ(decodeColumnDefinition41(test::concat({base, hex("0130 00")})).error(),
            DecodeError::kExtraBytes);
  EXPECT_EQ(decodeColumnDefinition41(test::concat({base, hex("0531")})).error(),
            DecodeError::kIncomplete);
}

// The response tracker checks column definitions through the view: the
// same fields, pointing into the packet, and the same refusals.
TEST(ColumnDefinition41, ViewPointsIntoThePacketAndFailsAlike) {
  for (const auto& c : columnCases()) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto v = decodeColumnDefinitionView(in, c.mariadb_capabilities);
    ASSERT_TRUE(v.has_value()) << toString(v.error());
    EXPECT_EQ(v->schema, c.message.schema);
    EXPECT_EQ(v->table, c.message.table);
    EXPECT_EQ(v->org_name, c.message.org_name);
    EXPECT_EQ(v->extended_type_info, c.message.extended_type_info);
    EXPECT_EQ(v->type, c.message.type);
    EXPECT_EQ(v->flags, c.message.flags);
    EXPECT_EQ(v->decimals, c.message.decimals);
    EXPECT_GE(reinterpret_cast<const uint8_t*>(v->name.data()), in.data());
    EXPECT_LT(reinterpret_cast<const uint8_t*>(v->name.data()), in.data() + in.size());
    for (size_t n = 0; n < in.size(); ++n) {
      ExactBuffer prefix(in, n);
      EXPECT_FALSE(decodeColumnDefinitionView(prefix.view(), c.mariadb_capabilities).has_value()) << n;
    }
  }
  Bytes bad = hex(columnCases()[0].bytes);
  bad[20] = 0x0b;
  EXPECT_EQ(decodeColumnDefinitionView(bad).error(), DecodeError::kProtocolValue);
}

TEST(ColumnDefinition41, Malformed) {
  Bytes in = hex(columnCases()[0].bytes);
  in[20] = 0x0b;  // fixed-fields length must be 0x0c
  ASSERT_EQ(hex(columnCases()[0].bytes)[20], 0x0c);
  EXPECT_EQ(decodeColumnDefinition41(in).error(), DecodeError::kProtocolValue);
  // Without the negotiated capability, extended info is not expected.
  EXPECT_FALSE(decodeColumnDefinition41(hex(columnCases()[2].bytes)).has_value());
}

TEST(ColumnCount, EncodeDecode) {
  const std::pair<uint64_t, const char*> cases[] = {{1, "01"}, {250, "fa"}, {251, "fcfb00"}, {4096, "fc0010"}};
  for (const auto& [count, bytes] : cases) {
    SCOPED_TRACE(bytes);
    Bytes out;
    encodeColumnCount(count, out);
    EXPECT_EQ(out, hex(bytes));
    Bytes in = hex(bytes);
    EXPECT_EQ(decodeColumnCount(ExactBuffer(in).view()).value(), count);
    expectEveryPrefixFails(in, [](ByteView b) { return decodeColumnCount(b); });
  }
}

TEST(ColumnCount, Malformed) {
  EXPECT_EQ(decodeColumnCount(hex("00")).error(), DecodeError::kProtocolValue);
  EXPECT_EQ(decodeColumnCount(hex("0301")).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeColumnCount(ByteView{}).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeColumnCount(hex("fb")).error(), DecodeError::kProtocolValue);
}

TEST(ColumnCount, MariadbMetadataFlag) {
  const uint32_t caps = mariadb_cap::kCacheMetadata;
  Bytes out;
  encodeColumnCount(ColumnCount{3, true}, caps, out);
  EXPECT_EQ(out, hex("0301"));
  out.clear();
  encodeColumnCount(ColumnCount{3, false}, caps, out);
  EXPECT_EQ(out, hex("0300"));
  out.clear();
  encodeColumnCount(ColumnCount{3, false}, 0, out);  // the flag exists only when negotiated
  EXPECT_EQ(out, hex("03"));

  EXPECT_EQ(decodeColumnCount(hex("0301"), caps).value(), (ColumnCount{3, true}));
  EXPECT_EQ(decodeColumnCount(hex("0300"), caps).value(), (ColumnCount{3, false}));
  EXPECT_EQ(decodeColumnCount(hex("03"), 0).value(), (ColumnCount{3, true}));
  EXPECT_EQ(decodeColumnCount(hex("0302"), caps).error(), DecodeError::kProtocolValue);
  expectEveryPrefixFails(hex("fc0010 01"), [&](ByteView b) { return decodeColumnCount(b, caps); });
}

TEST(TextRow, Encode) {
  Bytes out;
  encodeTextRow(std::vector<std::optional<std::string>>{"1", "alice", std::nullopt, ""}, out);
  EXPECT_EQ(out, hex("0131 05616c696365 fb 00"));
  out.clear();
  encodeTextRow(TextRow{std::string_view("x"), std::nullopt}, out);
  EXPECT_EQ(out, hex("0178 fb"));
  out.clear();
  std::string big(300, 'z');
  encodeTextRow(TextRow{std::string_view(big)}, out);
  EXPECT_EQ(out.size(), 303u);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 3), hex("fc2c01"));
}

TEST(TextRow, Decode) {
  Bytes in = hex("0131 05616c696365 fb 00");
  ExactBuffer buf(in);  // the values point into it: keep it alive
  auto row = decodeTextRow(buf.view(), 4);
  ASSERT_TRUE(row.has_value());
  ASSERT_EQ(row->size(), 4u);
  EXPECT_EQ((*row)[0], "1");
  EXPECT_EQ((*row)[1], "alice");
  EXPECT_FALSE((*row)[2].has_value());
  EXPECT_EQ((*row)[3], "");
  expectEveryPrefixFails(in, [](ByteView b) { return decodeTextRow(b, 4); });
}

TEST(TextRow, ColumnCountMustMatch) {
  Bytes in = hex("0131 05616c696365 fb");
  EXPECT_EQ(decodeTextRow(in, 2).error(), DecodeError::kExtraBytes);
  EXPECT_EQ(decodeTextRow(in, 4).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeTextRow(in, size_t{1} << 60).error(), DecodeError::kIncomplete);
  EXPECT_EQ(decodeTextRow(ByteView{}, 0)->size(), 0u);
  EXPECT_EQ(decodeTextRow(hex("ff"), 1).error(), DecodeError::kProtocolValue);
}

}  // namespace
}  // namespace sp::protocol
