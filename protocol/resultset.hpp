// Text-protocol result sets: column count, ColumnDefinition41, text rows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/constants.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

struct ColumnDefinition41 {
  std::string catalog = "def";  // lenenc
  std::string schema;           // lenenc
  std::string table;            // lenenc (alias)
  std::string org_table;        // lenenc
  std::string name;             // lenenc (alias)
  std::string org_name;         // lenenc
  // lenenc block of (int<1> kind, string<lenenc> value) entries; present only
  // when MariaDB's MARIADB_CLIENT_EXTENDED_TYPE_INFO was negotiated. Kept raw.
  std::string extended_type_info;
  // int<lenenc> length of fixed fields, always 0x0c
  uint16_t character_set = 0;   // int<2>
  uint32_t column_length = 0;   // int<4>
  ColumnType type = ColumnType::kVarString;  // int<1>
  uint16_t flags = 0;           // int<2>
  uint8_t decimals = 0;         // int<1>
  // int<2> filler; COM_FIELD_LIST adds lenenc default values (ignored on decode)
  bool operator==(const ColumnDefinition41&) const = default;
};
// `mariadb_capabilities`: the negotiated MariaDB extended capabilities
// (client's AND server's); only mariadb_cap::kExtendedTypeInfo matters here.
void encode(const ColumnDefinition41& m, Bytes& out, uint32_t mariadb_capabilities = 0);
DecodeResult<ColumnDefinition41> decodeColumnDefinition41(ByteView payload,
                                                          uint32_t mariadb_capabilities = 0);

// The same fields as views into the payload: what a relay that only checks
// the packet's layout needs, without copying six names per column.
struct ColumnDefinitionView {
  std::string_view catalog, schema, table, org_table, name, org_name, extended_type_info;
  uint16_t character_set = 0;
  uint32_t column_length = 0;
  ColumnType type = ColumnType::kVarString;
  uint16_t flags = 0;
  uint8_t decimals = 0;
};
DecodeResult<ColumnDefinitionView> decodeColumnDefinitionView(ByteView payload, uint32_t mariadb_capabilities = 0);

// The first packet of a result set: int<lenenc> column count (> 0), followed by
// int<1> "metadata follows" when mariadb_cap::kCacheMetadata was negotiated.
struct ColumnCount {
  uint64_t count = 0;
  bool metadata_follows = true;  // false: the column definitions are skipped
  bool operator==(const ColumnCount&) const = default;
};
void encodeColumnCount(uint64_t count, Bytes& out);
void encodeColumnCount(const ColumnCount& m, uint32_t mariadb_capabilities, Bytes& out);
// Without kCacheMetadata: the count alone (a trailing flag byte is kExtraBytes).
DecodeResult<uint64_t> decodeColumnCount(ByteView payload);
DecodeResult<ColumnCount> decodeColumnCount(ByteView payload, uint32_t mariadb_capabilities);

// A text row: one lenenc string per column, 0xfb for NULL.
using TextRow = std::vector<std::optional<std::string_view>>;
void encodeTextRow(const std::vector<std::optional<std::string>>& values, Bytes& out);
void encodeTextRow(const TextRow& values, Bytes& out);
// Values point into `payload`. The column count must match exactly.
DecodeResult<TextRow> decodeTextRow(ByteView payload, size_t column_count);

}  // namespace sp::protocol
