// Wire encoding of binary-protocol values. Text conversions live in binary_text.cpp.
#include <bit>
#include <limits>

#include "protocol/binary_detail.hpp"
#include "protocol/binary_value.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

using detail::WireLayout;

namespace {

constexpr uint8_t kDateLength = 4;
constexpr uint8_t kDateTimeLength = 7;
constexpr uint8_t kDateTimeMicroLength = 11;
constexpr uint8_t kTimeLength = 8;
constexpr uint8_t kTimeMicroLength = 12;

DecodeResult<uint64_t> readUnsigned(Reader& r, int width) {
  switch (width) {
    case 1: { SP_TRY(v, r.u8()); return v; }
    case 2: { SP_TRY(v, r.u16()); return v; }
    case 4: { SP_TRY(v, r.u32()); return v; }
    default: return r.u64();
  }
}

DecodeResult<BinaryValue> decodeInt(Reader& r, int width, bool is_unsigned) {
  SP_TRY(raw, readUnsigned(r, width));
  if (is_unsigned) return BinaryValue{raw};
  // Sign-extend from `width` bytes.
  int shift = 64 - 8 * width;
  return BinaryValue{static_cast<int64_t>(raw << shift) >> shift};
}

DecodeResult<BinaryValue> decodeDateTime(Reader& r) {
  SP_TRY(len, r.u8());
  BinaryDateTime d;
  if (len == 0) return BinaryValue{d};
  if (len != kDateLength && len != kDateTimeLength && len != kDateTimeMicroLength) {
    return std::unexpected(DecodeError::kProtocolValue);
  }
  SP_TRY(year, r.u16());
  SP_TRY(month, r.u8());
  SP_TRY(day, r.u8());
  d.year = year;
  d.month = month;
  d.day = day;
  if (len >= kDateTimeLength) {
    SP_TRY(hour, r.u8());
    SP_TRY(minute, r.u8());
    SP_TRY(second, r.u8());
    d.hour = hour;
    d.minute = minute;
    d.second = second;
  }
  if (len == kDateTimeMicroLength) {
    SP_TRY(micro, r.u32());
    d.microsecond = micro;
  }
  return BinaryValue{d};
}

DecodeResult<BinaryValue> decodeTime(Reader& r) {
  SP_TRY(len, r.u8());
  BinaryTime t;
  if (len == 0) return BinaryValue{t};
  if (len != kTimeLength && len != kTimeMicroLength) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(negative, r.u8());
  if (negative > 1) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(days, r.u32());
  SP_TRY(hour, r.u8());
  SP_TRY(minute, r.u8());
  SP_TRY(second, r.u8());
  t.negative = negative == 1;
  t.days = days;
  t.hour = hour;
  t.minute = minute;
  t.second = second;
  if (len == kTimeMicroLength) {
    SP_TRY(micro, r.u32());
    t.microsecond = micro;
  }
  return BinaryValue{t};
}

// True when the numeric value of `v` (int64_t or uint64_t) fits `width` bytes
// with the given signedness; `bits` receives its two's complement bits.
bool intBits(const BinaryValue& v, int width, bool is_unsigned, uint64_t& bits) {
  int value_bits = 8 * width;
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    uint64_t max = is_unsigned ? (width == 8 ? ~uint64_t{0} : (uint64_t{1} << value_bits) - 1)
                               : (uint64_t{1} << (value_bits - 1)) - 1;
    bits = *u;
    return *u <= max;
  }
  const auto* s = std::get_if<int64_t>(&v);
  if (s == nullptr) return false;
  bits = static_cast<uint64_t>(*s);
  if (is_unsigned) return *s >= 0 && (width == 8 || *s < (int64_t{1} << value_bits));
  if (width == 8) return true;
  int64_t limit = int64_t{1} << (value_bits - 1);
  return *s >= -limit && *s < limit;
}

void writeUnsigned(Writer& w, uint64_t bits, int width) {
  switch (width) {
    case 1: w.u8(static_cast<uint8_t>(bits)); break;
    case 2: w.u16(static_cast<uint16_t>(bits)); break;
    case 4: w.u32(static_cast<uint32_t>(bits)); break;
    default: w.u64(bits); break;
  }
}

void writeDateTime(Writer& w, const BinaryDateTime& d) {
  uint8_t len = d.microsecond != 0                              ? kDateTimeMicroLength
                : (d.hour != 0 || d.minute != 0 || d.second != 0) ? kDateTimeLength
                : (d.year != 0 || d.month != 0 || d.day != 0)     ? kDateLength
                                                                  : 0;
  w.u8(len);
  if (len == 0) return;
  w.u16(d.year);
  w.u8(d.month);
  w.u8(d.day);
  if (len == kDateLength) return;
  w.u8(d.hour);
  w.u8(d.minute);
  w.u8(d.second);
  if (len == kDateTimeMicroLength) w.u32(d.microsecond);
}

void writeTime(Writer& w, const BinaryTime& t) {
  bool zero = t.days == 0 && t.hour == 0 && t.minute == 0 && t.second == 0 && t.microsecond == 0;
  if (zero && !t.negative) {
    w.u8(0);
    return;
  }
  w.u8(t.microsecond != 0 ? kTimeMicroLength : kTimeLength);
  w.u8(t.negative ? 1 : 0);
  w.u32(t.days);
  w.u8(t.hour);
  w.u8(t.minute);
  w.u8(t.second);
  if (t.microsecond != 0) w.u32(t.microsecond);
}

EncodeResult mismatch() { return std::unexpected(DecodeError::kProtocolValue); }

// Writes the value with `write` when it holds a T, else reports the mismatch.
template <class T, class Write>
EncodeResult writeIf(const BinaryValue& v, Write&& write) {
  const T* p = std::get_if<T>(&v);
  if (p == nullptr) return mismatch();
  write(*p);
  return {};
}

}  // namespace

BinaryType binaryTypeOf(const ColumnDefinition41& column) {
  return {column.type, (column.flags & column_flag::kUnsigned) != 0};
}

DecodeResult<BinaryValue> decodeBinaryValue(Reader& r, BinaryType t) {
  WireLayout layout = detail::layoutOf(t.type);
  switch (layout) {
    case WireLayout::kNone:
      return BinaryValue{NullValue{}};
    case WireLayout::kInt1:
    case WireLayout::kInt2:
    case WireLayout::kInt4:
    case WireLayout::kInt8:
      return decodeInt(r, detail::intWidth(layout), t.is_unsigned);
    case WireLayout::kFloat: {
      SP_TRY(bits, r.u32());
      return BinaryValue{std::bit_cast<float>(bits)};
    }
    case WireLayout::kDouble: {
      SP_TRY(bits, r.u64());
      return BinaryValue{std::bit_cast<double>(bits)};
    }
    case WireLayout::kDateTime:
      return decodeDateTime(r);
    case WireLayout::kTime:
      return decodeTime(r);
    case WireLayout::kLenenc: {
      SP_TRY(s, r.lenencString());
      return BinaryValue{s};
    }
    case WireLayout::kUnknown:
      break;
  }
  return std::unexpected(DecodeError::kProtocolValue);
}

EncodeResult encodeBinaryValue(const BinaryValue& v, BinaryType t, Bytes& out) {
  Writer w(out);
  WireLayout layout = detail::layoutOf(t.type);
  switch (layout) {
    case WireLayout::kInt1:
    case WireLayout::kInt2:
    case WireLayout::kInt4:
    case WireLayout::kInt8: {
      int width = detail::intWidth(layout);
      uint64_t bits = 0;
      if (!intBits(v, width, t.is_unsigned, bits)) return mismatch();
      writeUnsigned(w, bits, width);
      return {};
    }
    case WireLayout::kFloat:
      return writeIf<float>(v, [&](float f) { w.u32(std::bit_cast<uint32_t>(f)); });
    case WireLayout::kDouble:
      return writeIf<double>(v, [&](double d) { w.u64(std::bit_cast<uint64_t>(d)); });
    case WireLayout::kDateTime:
      return writeIf<BinaryDateTime>(v, [&](const BinaryDateTime& d) { writeDateTime(w, d); });
    case WireLayout::kTime:
      return writeIf<BinaryTime>(v, [&](const BinaryTime& tm) { writeTime(w, tm); });
    case WireLayout::kLenenc:
      return writeIf<std::string_view>(v, [&](std::string_view s) { w.lenencString(s); });
    case WireLayout::kNone:
    case WireLayout::kUnknown:
      break;
  }
  return mismatch();
}

}  // namespace sp::protocol
