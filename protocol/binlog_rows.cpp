#include "protocol/binlog_rows.hpp"

#include "protocol/binlog_event.hpp"
#include "protocol/binlog_value_codec.hpp"
#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {

using T = ColumnType;

// Bytes of metadata each column type has in a TABLE_MAP.
DecodeResult<uint16_t> readColumnMeta(Reader& r, uint8_t type) {
  switch (static_cast<ColumnType>(type)) {
    case T::kFloat:
    case T::kDouble:
    case T::kBlob:
    case T::kTinyBlob:
    case T::kMediumBlob:
    case T::kLongBlob:
    case T::kGeometry:
    case T::kJson:
    case T::kTime2:
    case T::kDateTime2:
    case T::kTimestamp2: {
      SP_TRY(b, r.u8());
      return b;
    }
    case T::kVarchar:
    case T::kVarString:
    case T::kBit:  // int<1> bits % 8, int<1> whole bytes: read as u16 LE
      return r.u16();
    case T::kNewDecimal:  // int<1> precision, int<1> scale
    case T::kString:      // int<1> real type, int<1> length bits
    case T::kEnum:
    case T::kSet: {
      SP_TRY(hi, r.u8());
      SP_TRY(lo, r.u8());
      return static_cast<uint16_t>(hi << 8 | lo);
    }
    default:
      return 0;
  }
}

// A bitmap of `bits` bits, least significant bit first (rows events, NULL bits).
DecodeResult<std::vector<bool>> readBitmap(Reader& r, size_t bits) {
  SP_TRY(bytes, r.fixed((bits + 7) / 8));
  std::vector<bool> out(bits);
  for (size_t i = 0; i < bits; ++i) out[i] = (static_cast<uint8_t>(bytes[i / 8]) >> (i % 8)) & 1;
  return out;
}

// The columns the SIGNEDNESS field has a bit for. MariaDB counts YEAR (a
// TINYINT underneath) among them, as a real server's TABLE_MAP shows.
bool isNumericForSignedness(uint8_t type) {
  switch (static_cast<ColumnType>(type)) {
    case T::kYear:
    case T::kTiny:
    case T::kShort:
    case T::kInt24:
    case T::kLong:
    case T::kLongLong:
    case T::kFloat:
    case T::kDouble:
    case T::kNewDecimal:
      return true;
    default:
      return false;
  }
}

// Optional metadata field types (binlog_row_metadata).
constexpr uint8_t kSignedness = 1;
constexpr uint8_t kColumnName = 4;
constexpr uint8_t kSimplePrimaryKey = 8;
constexpr uint8_t kPrimaryKeyWithPrefix = 9;

DecodeResult<void> readOptionalField(TableMapEvent& t, uint8_t type, ByteView value) {
  Reader r(value);
  const size_t n = t.column_types.size();
  switch (type) {
    case kSignedness: {
      // One bit per numeric column, most significant bit first; 1 = unsigned.
      t.is_unsigned.assign(n, false);
      size_t bit = 0;
      for (size_t c = 0; c < n; ++c) {
        if (!isNumericForSignedness(t.column_types[c])) continue;
        if (bit / 8 >= value.size()) return std::unexpected(DecodeError::kIncomplete);
        t.is_unsigned[c] = (value[bit / 8] >> (7 - bit % 8)) & 1;
        ++bit;
      }
      t.has_signedness = true;
      return {};
    }
    case kColumnName:
      t.column_names.clear();
      while (!r.empty()) {
        SP_TRY(name, r.lenencString());
        t.column_names.emplace_back(name);
      }
      if (t.column_names.size() != n) return std::unexpected(DecodeError::kProtocolValue);
      return {};
    case kSimplePrimaryKey:
    case kPrimaryKeyWithPrefix:
      t.primary_key.clear();
      while (!r.empty()) {
        SP_TRY(index, r.lenenc());
        if (index >= n) return std::unexpected(DecodeError::kProtocolValue);
        t.primary_key.push_back(static_cast<uint32_t>(index));
        if (type == kPrimaryKeyWithPrefix) SP_TRY_VOID(r.lenenc());  // prefix length
      }
      return {};
    default:
      return {};  // charsets, ENUM/SET strings, geometry types: not needed
  }
}

}  // namespace

DecodeResult<TableMapEvent> decodeTableMap(ByteView data, uint8_t post_header_length) {
  if (post_header_length != 8 && post_header_length != 6) return std::unexpected(DecodeError::kProtocolValue);
  Reader r(data);
  TableMapEvent t;
  if (post_header_length == 6) {
    SP_TRY(id, r.u32());
    t.table_id = id;
  } else {
    SP_TRY(id, r.u48());
    t.table_id = id;
  }
  SP_TRY(flags, r.u16());
  t.flags = flags;
  SP_TRY(schema_length, r.u8());
  SP_TRY(schema, r.fixed(schema_length));
  SP_TRY(nul1, r.u8());
  SP_TRY(table_length, r.u8());
  SP_TRY(table, r.fixed(table_length));
  SP_TRY(nul2, r.u8());
  if (nul1 != 0 || nul2 != 0) return std::unexpected(DecodeError::kProtocolValue);
  t.schema = std::string(schema);
  t.table = std::string(table);
  SP_TRY(count, r.lenenc());
  if (count == 0 || count > 4096) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(types, r.fixed(count));
  t.column_types.assign(types.begin(), types.end());
  SP_TRY(meta_length, r.lenenc());
  SP_TRY(meta_bytes, r.fixed(meta_length));
  Reader meta(asBytes(meta_bytes));
  for (uint8_t type : t.column_types) {
    SP_TRY(m, readColumnMeta(meta, type));
    t.column_meta.push_back(m);
  }
  SP_TRY_VOID(meta.expectEnd());
  SP_TRY(nullable, readBitmap(r, count));
  t.nullable = std::move(nullable);
  while (!r.empty()) {
    SP_TRY(type, r.u8());
    SP_TRY(value, r.lenencString());
    SP_TRY_VOID(readOptionalField(t, type, asBytes(value)));
  }
  return t;
}

bool isRowsEventType(uint8_t type) {
  return (type >= binlog_type::kWriteRowsV1 && type <= binlog_type::kDeleteRowsV1) ||
         (type >= binlog_type::kWriteRowsV2 && type <= binlog_type::kDeleteRowsV2);
}
bool isUpdateRowsType(uint8_t type) {
  return type == binlog_type::kUpdateRowsV1 || type == binlog_type::kUpdateRowsV2;
}
bool isDeleteRowsType(uint8_t type) {
  return type == binlog_type::kDeleteRowsV1 || type == binlog_type::kDeleteRowsV2;
}

DecodeResult<RowsEventData> decodeRowsEvent(ByteView data, uint8_t type, uint8_t post_header_length) {
  if (!isRowsEventType(type)) return std::unexpected(DecodeError::kProtocolValue);
  const bool v2 = type >= binlog_type::kWriteRowsV2;
  if (post_header_length != (v2 ? 10 : 8)) return std::unexpected(DecodeError::kProtocolValue);
  Reader r(data);
  RowsEventData e;
  e.type = type;
  SP_TRY(id, r.u48());
  SP_TRY(flags, r.u16());
  e.table_id = id;
  e.flags = flags;
  if (v2) {
    SP_TRY(extra_length, r.u16());
    if (extra_length < 2) return std::unexpected(DecodeError::kProtocolValue);
    SP_TRY_VOID(r.skip(extra_length - 2));
  }
  SP_TRY(count, r.lenenc());
  if (count == 0 || count > 4096) return std::unexpected(DecodeError::kProtocolValue);
  e.column_count = count;
  SP_TRY(present, readBitmap(r, count));
  e.present = std::move(present);
  if (isUpdateRowsType(type)) {
    SP_TRY(after, readBitmap(r, count));
    e.present_after = std::move(after);
  }
  e.images = r.rest();
  return e;
}

namespace {

DecodeResult<std::vector<BinlogValue>> readImage(Reader& r, const TableMapEvent& t, const std::vector<bool>& present) {
  size_t present_count = 0;
  for (bool p : present) present_count += p;
  SP_TRY(nulls, readBitmap(r, present_count));
  std::vector<BinlogValue> row(t.column_types.size());
  size_t k = 0;
  for (size_t c = 0; c < t.column_types.size(); ++c) {
    if (!present[c]) continue;
    if (nulls[k++]) continue;  // kNull
    bool is_unsigned = c < t.is_unsigned.size() && t.is_unsigned[c];
    SP_TRY(v, readBinlogValue(r, t.column_types[c], t.column_meta[c], is_unsigned));
    row[c] = std::move(v);
  }
  return row;
}

}  // namespace

DecodeResult<std::vector<std::vector<BinlogValue>>> decodeRowImages(const TableMapEvent& table,
                                                                    const RowsEventData& rows) {
  if (rows.column_count != table.column_types.size()) return std::unexpected(DecodeError::kProtocolValue);
  std::vector<std::vector<BinlogValue>> out;
  Reader r(rows.images);
  const bool update = isUpdateRowsType(rows.type);
  if (r.empty()) return std::unexpected(DecodeError::kIncomplete);  // a rows event has at least one row
  while (!r.empty()) {
    // A row takes at least one byte (its NULL bitmap, or a value): an image
    // of no present column would otherwise repeat for ever on the same bytes.
    const size_t before = r.remaining();
    SP_TRY(image, readImage(r, table, rows.present));
    if (r.remaining() == before) return std::unexpected(DecodeError::kProtocolValue);
    out.push_back(std::move(image));
    if (update) {
      SP_TRY(after, readImage(r, table, rows.present_after));
      out.push_back(std::move(after));
    }
  }
  return out;
}

}  // namespace sp::protocol
