#include "protocol/binary_row.hpp"

#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {
constexpr uint8_t kRowHeader = 0x00;
constexpr size_t kNullBitOffset = 2;

size_t bitmapSize(size_t columns) { return (columns + 7 + kNullBitOffset) / 8; }

bool bitSet(std::string_view bitmap, size_t bit) {
  return (static_cast<uint8_t>(bitmap[bit / 8]) >> (bit % 8)) & 1;
}
}  // namespace

std::vector<BinaryType> binaryTypesOf(std::span<const ColumnDefinition41> columns) {
  std::vector<BinaryType> types;
  types.reserve(columns.size());
  for (const ColumnDefinition41& c : columns) types.push_back(binaryTypeOf(c));
  return types;
}

DecodeResult<BinaryRow> decodeBinaryRow(ByteView payload, std::span<const BinaryType> types) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kRowHeader) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(bitmap, r.fixed(bitmapSize(types.size())));
  for (size_t bit = 0; bit < bitmap.size() * 8; ++bit) {
    bool is_column = bit >= kNullBitOffset && bit < types.size() + kNullBitOffset;
    if (!is_column && bitSet(bitmap, bit)) return std::unexpected(DecodeError::kProtocolValue);
  }
  BinaryRow row;
  row.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    if (bitSet(bitmap, i + kNullBitOffset)) {
      row.emplace_back(NullValue{});
      continue;
    }
    // A NULL-typed column is always flagged in the bitmap; not flagged, it has
    // no length to read.
    if (types[i].type == ColumnType::kNull) return std::unexpected(DecodeError::kProtocolValue);
    SP_TRY(v, decodeBinaryValue(r, types[i]));
    row.push_back(v);
  }
  SP_TRY_VOID(r.expectEnd());
  return row;
}

EncodeResult encodeBinaryRow(std::span<const BinaryValue> values, std::span<const BinaryType> types,
                             Bytes& out) {
  if (values.size() != types.size()) return std::unexpected(DecodeError::kProtocolValue);
  size_t start = out.size();
  Writer w(out);
  w.u8(kRowHeader);
  size_t bitmap_at = out.size();
  w.zeros(bitmapSize(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (isNull(values[i])) {
      size_t bit = i + kNullBitOffset;
      out[bitmap_at + bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
      continue;
    }
    if (auto ok = encodeBinaryValue(values[i], types[i], out); !ok) {
      out.resize(start);
      return ok;
    }
  }
  return {};
}

}  // namespace sp::protocol
