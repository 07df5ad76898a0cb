#include "protocol/resultset.hpp"

#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {
constexpr uint64_t kFixedFieldsLength = 0x0c;
constexpr uint8_t kNullValue = 0xfb;

DecodeResult<void> readString(Reader& r, std::string_view& out) {
  SP_TRY(s, r.lenencString());
  out = s;
  return {};
}
}  // namespace

void encode(const ColumnDefinition41& m, Bytes& out, uint32_t mariadb_capabilities) {
  Writer w(out);
  w.lenencString(m.catalog);
  w.lenencString(m.schema);
  w.lenencString(m.table);
  w.lenencString(m.org_table);
  w.lenencString(m.name);
  w.lenencString(m.org_name);
  if (mariadb_capabilities & mariadb_cap::kExtendedTypeInfo) w.lenencString(m.extended_type_info);
  w.lenenc(kFixedFieldsLength);
  w.u16(m.character_set);
  w.u32(m.column_length);
  w.u8(static_cast<uint8_t>(m.type));
  w.u16(m.flags);
  w.u8(m.decimals);
  w.zeros(2);
}

DecodeResult<ColumnDefinitionView> decodeColumnDefinitionView(ByteView payload, uint32_t mariadb_capabilities) {
  Reader r(payload);
  ColumnDefinitionView m;
  for (std::string_view* field : {&m.catalog, &m.schema, &m.table, &m.org_table, &m.name, &m.org_name}) {
    SP_TRY_VOID(readString(r, *field));
  }
  if (mariadb_capabilities & mariadb_cap::kExtendedTypeInfo) {
    SP_TRY_VOID(readString(r, m.extended_type_info));
  }
  SP_TRY(fixed_len, r.lenenc());
  if (fixed_len != kFixedFieldsLength) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(charset, r.u16());
  m.character_set = charset;
  SP_TRY(length, r.u32());
  m.column_length = length;
  // Any type byte is accepted: the proxy forwards types it does not know.
  SP_TRY(type, r.u8());
  m.type = static_cast<ColumnType>(type);
  SP_TRY(flags, r.u16());
  m.flags = flags;
  SP_TRY(decimals, r.u8());
  m.decimals = decimals;
  SP_TRY_VOID(r.skip(2));  // filler
  if (r.empty()) return m;
  // COM_FIELD_LIST appends the column's default value: lenenc string or 0xfb (NULL).
  if (r.rest()[0] == kNullValue) {
    SP_TRY_VOID(r.skip(1));
  } else {
    SP_TRY_VOID(r.lenencString());
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

DecodeResult<ColumnDefinition41> decodeColumnDefinition41(ByteView payload,
                                                          uint32_t mariadb_capabilities) {
  SP_TRY(v, decodeColumnDefinitionView(payload, mariadb_capabilities));
  ColumnDefinition41 m;
  m.catalog = v.catalog;
  m.schema = v.schema;
  m.table = v.table;
  m.org_table = v.org_table;
  m.name = v.name;
  m.org_name = v.org_name;
  m.extended_type_info = v.extended_type_info;
  m.character_set = v.character_set;
  m.column_length = v.column_length;
  m.type = v.type;
  m.flags = v.flags;
  m.decimals = v.decimals;
  return m;
}

void encodeColumnCount(uint64_t count, Bytes& out) { Writer(out).lenenc(count); }

void encodeColumnCount(const ColumnCount& m, uint32_t mariadb_capabilities, Bytes& out) {
  Writer w(out);
  w.lenenc(m.count);
  if (mariadb_capabilities & mariadb_cap::kCacheMetadata) w.u8(m.metadata_follows ? 1 : 0);
}

DecodeResult<uint64_t> decodeColumnCount(ByteView payload) {
  SP_TRY(m, decodeColumnCount(payload, 0));
  return m.count;
}

DecodeResult<ColumnCount> decodeColumnCount(ByteView payload, uint32_t mariadb_capabilities) {
  Reader r(payload);
  ColumnCount m;
  SP_TRY(count, r.lenenc());
  if (count == 0) return std::unexpected(DecodeError::kProtocolValue);  // 0x00 is an OK packet
  m.count = count;
  if (mariadb_capabilities & mariadb_cap::kCacheMetadata) {
    SP_TRY(follows, r.u8());
    if (follows > 1) return std::unexpected(DecodeError::kProtocolValue);
    m.metadata_follows = follows == 1;
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

namespace {
template <class Row>
void encodeRow(const Row& values, Bytes& out) {
  Writer w(out);
  for (const auto& v : values) {
    if (v) {
      w.lenencString(*v);
    } else {
      w.u8(kNullValue);
    }
  }
}
}  // namespace

void encodeTextRow(const std::vector<std::optional<std::string>>& values, Bytes& out) {
  encodeRow(values, out);
}
void encodeTextRow(const TextRow& values, Bytes& out) { encodeRow(values, out); }

DecodeResult<TextRow> decodeTextRow(ByteView payload, size_t column_count) {
  // Every value takes at least one byte; checking first keeps a bogus column
  // count from driving a huge allocation.
  if (column_count > payload.size()) return std::unexpected(DecodeError::kIncomplete);
  Reader r(payload);
  TextRow row;
  row.reserve(column_count);
  for (size_t i = 0; i < column_count; ++i) {
    if (!r.empty() && r.rest()[0] == kNullValue) {
      SP_TRY_VOID(r.skip(1));
      row.emplace_back(std::nullopt);
      continue;
    }
    SP_TRY(value, r.lenencString());
    row.emplace_back(value);
  }
  SP_TRY_VOID(r.expectEnd());
  return row;
}

}  // namespace sp::protocol
