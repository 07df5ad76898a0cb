// Row-based binlog events: TABLE_MAP (the table and its column types) and
// WRITE/UPDATE/DELETE_ROWS (row images), with the decoding of each column
// value from its binlog storage format, and the SQL literal of a decoded
// value. Pure: no sockets.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/error.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// TABLE_MAP (19): post-header int<6> table_id, int<2> flags; body int<1>
// schema length, schema, NUL, int<1> table length, table, NUL,
// int<lenenc> column_count, column types (1 byte each), int<lenenc>
// metadata length, metadata (0-2 bytes per column, by type), NULL bitmap
// (nullable columns), then optional metadata (binlog_row_metadata=FULL):
// TLV fields int<1> type, int<lenenc> length, value.
struct TableMapEvent {
  uint64_t table_id = 0;
  uint16_t flags = 0;
  std::string schema;
  std::string table;
  std::vector<uint8_t> column_types;   // protocol::ColumnType values
  std::vector<uint16_t> column_meta;   // per column, decoded per type (see binlog_rows.cpp)
  std::vector<bool> nullable;
  // Optional metadata; empty when the source logs MINIMAL metadata.
  std::vector<std::string> column_names;
  std::vector<bool> is_unsigned;  // per column (false for non-numeric ones)
  bool has_signedness = false;
  std::vector<uint32_t> primary_key;  // column indexes (SIMPLE_PRIMARY_KEY)
};
DecodeResult<TableMapEvent> decodeTableMap(ByteView data, uint8_t post_header_length);

// WRITE/UPDATE/DELETE_ROWS v1 (23-25) and v2 (30-32): post-header int<6>
// table_id, int<2> flags [v2: int<2> extra-data length (counting itself),
// extra data]; body int<lenenc> column_count, columns-present bitmap
// [UPDATE: a second bitmap for the after image], then row images until the
// end: each a NULL bitmap over the present columns and the values of the
// present non-NULL columns. The images are decoded against the TABLE_MAP
// of table_id by decodeRowImages().
struct RowsEventData {
  uint8_t type = 0;
  uint64_t table_id = 0;
  uint16_t flags = 0;
  uint64_t column_count = 0;
  std::vector<bool> present;
  std::vector<bool> present_after;  // UPDATE only
  ByteView images;                   // points into the event
  static constexpr uint16_t kStatementEnd = 1;
};
DecodeResult<RowsEventData> decodeRowsEvent(ByteView data, uint8_t type, uint8_t post_header_length);
bool isRowsEventType(uint8_t type);
bool isUpdateRowsType(uint8_t type);
bool isDeleteRowsType(uint8_t type);

// One column value of a row image.
// kInt / kUInt: integer columns by signedness (ENUM as its 1-based index and
// SET as its bitmap are kUInt); kDouble: FLOAT and DOUBLE; kDecimal: DECIMAL
// as the server prints it ("-12.340"); kTemporal: DATE, DATETIME, TIMESTAMP
// (in UTC), TIME, YEAR as the server prints them ("2024-02-29 13:01:02.500000",
// "-838:59:59"); kBytes: strings and blobs, raw bytes in the column's
// character set; kBit: BIT as an unsigned number.
struct BinlogValue {
  enum class Kind : uint8_t { kNull, kInt, kUInt, kDouble, kDecimal, kBytes, kTemporal, kBit };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string text;  // kDecimal, kTemporal (canonical text), kBytes (raw bytes)
  bool operator==(const BinlogValue&) const = default;
};

// The rows of a rows event: one vector per image, each value at its column's
// index (columns absent from the image are kNull). UPDATE images alternate
// before, after.
DecodeResult<std::vector<std::vector<BinlogValue>>> decodeRowImages(const TableMapEvent& table,
                                                                    const RowsEventData& rows);

// The MySQL literal that stores exactly this value into a column of the type
// it came from: integers as digits, FLOAT/DOUBLE in the shortest form that
// reads back as the same value, DECIMAL as its digits, temporal values as
// quoted text (TIMESTAMP text is UTC: apply under time_zone '+00:00'),
// bytes as X'..' (no quoting or character-set question), NULL as NULL.
std::string binlogValueLiteral(const BinlogValue& v);

}  // namespace sp::protocol
