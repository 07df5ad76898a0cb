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
  // int<lenenc> length of fixed fields, always 0x0c
  uint16_t character_set = 0;   // int<2>
  uint32_t column_length = 0;   // int<4>
  ColumnType type = ColumnType::kVarString;  // int<1>
  uint16_t flags = 0;           // int<2>
  uint8_t decimals = 0;         // int<1>
  // int<2> filler; COM_FIELD_LIST adds lenenc default values (ignored on decode)
};
void encode(const ColumnDefinition41& m, Bytes& out);
DecodeResult<ColumnDefinition41> decodeColumnDefinition41(ByteView payload);

// The first packet of a result set: int<lenenc> column count (> 0).
void encodeColumnCount(uint64_t count, Bytes& out);
DecodeResult<uint64_t> decodeColumnCount(ByteView payload);

// A text row: one lenenc string per column, 0xfb for NULL.
using TextRow = std::vector<std::optional<std::string_view>>;
void encodeTextRow(const std::vector<std::optional<std::string>>& values, Bytes& out);
void encodeTextRow(const TextRow& values, Bytes& out);
// Values point into `payload`. The column count must match exactly.
DecodeResult<TextRow> decodeTextRow(ByteView payload, size_t column_count);

}  // namespace sp::protocol
