#include "protocol/binlog_value_codec.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"
#include "protocol/sql_literal.hpp"

namespace sp::protocol {

namespace {

using T = ColumnType;
using Kind = BinlogValue::Kind;

BinlogValue intValue(int64_t v) {
  BinlogValue out;
  out.kind = Kind::kInt;
  out.i = v;
  return out;
}
BinlogValue uintValue(uint64_t v, Kind kind = Kind::kUInt) {
  BinlogValue out;
  out.kind = kind;
  out.u = v;
  return out;
}
BinlogValue textValue(Kind kind, std::string text) {
  BinlogValue out;
  out.kind = kind;
  out.text = std::move(text);
  return out;
}

// Little-endian integer of `n` bytes (1..8), sign-extended when `is_signed`.
DecodeResult<BinlogValue> readInteger(Reader& r, size_t n, bool is_unsigned) {
  // Widths come from TABLE_MAP metadata (a SET's storage size, a BIT's
  // length bytes): a value outside 1..8 is a corrupt event, not a shift.
  if (n < 1 || n > 8) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(bytes, r.fixed(n));
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (is_unsigned) return uintValue(v);
  if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);
  return intValue(static_cast<int64_t>(v));
}

// Big-endian unsigned integer of `n` bytes (temporal and DECIMAL storage).
DecodeResult<uint64_t> readBigEndian(Reader& r, size_t n) {
  SP_TRY(bytes, r.fixed(n));
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(bytes[i]);
  return v;
}

DecodeResult<BinlogValue> readBytesWithLength(Reader& r, size_t length_bytes) {
  SP_TRY(length, readInteger(r, length_bytes, true));
  SP_TRY(bytes, r.fixed(length.u));
  return textValue(Kind::kBytes, std::string(bytes));
}

// "." and the first `fsp` digits of the microseconds; nothing for fsp 0.
std::string fraction(uint32_t usec, unsigned fsp) {
  if (fsp == 0) return {};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06u", usec % 1000000);
  return "." + std::string(buf, fsp);
}

std::string dateText(unsigned y, unsigned m, unsigned d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04u-%02u-%02u", y, m, d);
  return buf;
}
std::string clockText(unsigned h, unsigned m, unsigned s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02u:%02u:%02u", h, m, s);
  return buf;
}

// Fractional seconds stored after DATETIME2/TIMESTAMP2/TIME2: (fsp + 1) / 2
// big-endian bytes, in units of 10^-(2*bytes) seconds.
DecodeResult<uint32_t> readFraction(Reader& r, unsigned fsp) {
  size_t n = (fsp + 1) / 2;
  if (n == 0) return 0u;
  SP_TRY(v, readBigEndian(r, n));
  static constexpr uint32_t kScale[] = {1, 10000, 100, 1};
  return static_cast<uint32_t>(v * kScale[n]);
}

// Days-from-civil inverse (proleptic Gregorian): a TIMESTAMP2's UTC date.
void civilFromDays(int64_t z, unsigned& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<unsigned>(yoe + era * 400 + (m <= 2));
}

std::string timestampText(uint64_t seconds, uint32_t usec, unsigned fsp) {
  if (seconds == 0 && usec == 0) return "0000-00-00 00:00:00" + fraction(0, fsp);
  unsigned y, m, d;
  civilFromDays(static_cast<int64_t>(seconds / 86400), y, m, d);
  uint64_t s = seconds % 86400;
  return dateText(y, m, d) + " " + clockText(s / 3600, s / 60 % 60, s % 60) + fraction(usec, fsp);
}

DecodeResult<BinlogValue> readDateTime2(Reader& r, unsigned fsp) {
  if (fsp > 6) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(packed, readBigEndian(r, 5));
  SP_TRY(usec, readFraction(r, fsp));
  const int64_t intpart = static_cast<int64_t>(packed) - 0x8000000000LL;
  if (intpart < 0) return std::unexpected(DecodeError::kProtocolValue);
  const int64_t ymd = intpart >> 17, ym = ymd >> 5, hms = intpart % (1 << 17);
  return textValue(Kind::kTemporal, dateText(ym / 13, ym % 13, ymd % 32) + " " +
                                        clockText(hms >> 12, (hms >> 6) % 64, hms % 64) + fraction(usec, fsp));
}

DecodeResult<BinlogValue> readTime2(Reader& r, unsigned fsp) {
  if (fsp > 6) return std::unexpected(DecodeError::kProtocolValue);
  // The server's packed form: (seconds part << 24) + microseconds, stored
  // offset so that the bytes sort; a negative value with a fraction borrows
  // one from the integer part.
  int64_t packed;
  if (fsp >= 5) {
    SP_TRY(v, readBigEndian(r, 6));
    packed = static_cast<int64_t>(v) - 0x800000000000LL;
  } else {
    SP_TRY(v, readBigEndian(r, 3));
    int64_t intpart = static_cast<int64_t>(v) - 0x800000;
    int64_t frac = 0;
    if (fsp >= 1) {
      const size_t n = (fsp + 1) / 2;
      SP_TRY(f, readBigEndian(r, n));
      frac = static_cast<int64_t>(f);
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= int64_t(1) << (8 * n);
      }
      frac *= n == 1 ? 10000 : 100;
    }
    packed = intpart * (int64_t(1) << 24) + frac;
  }
  const bool negative = packed < 0;
  const uint64_t magnitude = negative ? uint64_t(-packed) : uint64_t(packed);
  const uint64_t hms = magnitude >> 24;
  const uint32_t usec = static_cast<uint32_t>(magnitude % (1 << 24));
  if (usec > 999999) return std::unexpected(DecodeError::kProtocolValue);
  return textValue(Kind::kTemporal, (negative ? "-" : "") +
                                        clockText((hms >> 12) % (1 << 10), (hms >> 6) % 64, hms % 64) +
                                        fraction(usec, fsp));
}

// DECIMAL: groups of 9 digits in 4 bytes big-endian, a shorter leading and
// trailing group (dig2bytes), the first bit inverted for the sign, every
// byte inverted for negative values.
DecodeResult<BinlogValue> readNewDecimal(Reader& r, uint16_t meta) {
  static constexpr unsigned kDigBytes[] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
  const unsigned precision = meta >> 8, scale = meta & 0xff;
  if (precision == 0 || precision > 65 || scale > 38 || scale > precision) {
    return std::unexpected(DecodeError::kProtocolValue);
  }
  const unsigned intg = precision - scale;
  const unsigned intg0 = intg / 9, intg0x = intg % 9, frac0 = scale / 9, frac0x = scale % 9;
  const size_t size = intg0 * 4 + kDigBytes[intg0x] + frac0 * 4 + kDigBytes[frac0x];
  SP_TRY(raw, r.fixed(size));
  std::string bytes(raw);
  const bool negative = !(static_cast<uint8_t>(bytes[0]) & 0x80);
  bytes[0] = static_cast<char>(bytes[0] ^ 0x80);
  if (negative) {
    for (char& c : bytes) c = static_cast<char>(~c);
  }
  Reader g(asBytes(bytes));
  auto group = [&](unsigned digits, bool pad, std::string& out) -> DecodeResult<void> {
    if (digits == 0) return {};
    SP_TRY(v, readBigEndian(g, kDigBytes[digits]));
    if (v >= 1000000000 || (digits < 9 && v >= std::array<uint64_t, 9>{1, 10, 100, 1000, 10000, 100000, 1000000,
                                                                     10000000, 100000000}[digits])) {
      return std::unexpected(DecodeError::kProtocolValue);
    }
    char buf[16];
    std::snprintf(buf, sizeof buf, pad ? "%0*u" : "%u", static_cast<int>(digits), static_cast<unsigned>(v));
    out += buf;
    return {};
  };
  std::string integer, frac;
  SP_TRY_VOID(group(intg0x, true, integer));
  for (unsigned i = 0; i < intg0; ++i) SP_TRY_VOID(group(9, true, integer));
  for (unsigned i = 0; i < frac0; ++i) SP_TRY_VOID(group(9, true, frac));
  SP_TRY_VOID(group(frac0x, true, frac));
  size_t first = integer.find_first_not_of('0');
  integer = first == std::string::npos ? "0" : integer.substr(first);
  std::string text = (negative ? "-" : "") + integer + (scale ? "." + frac : "");
  return textValue(Kind::kDecimal, std::move(text));
}

// CHAR, ENUM and SET are all logged as STRING; the metadata's first byte
// says which, and carries two more length bits for CHAR over 255 bytes.
DecodeResult<BinlogValue> readString(Reader& r, uint16_t meta) {
  unsigned real_type = meta >> 8, length = meta & 0xff;
  if ((real_type & 0x30) != 0x30) {
    length |= ((real_type & 0x30) ^ 0x30) << 4;
    real_type |= 0x30;
  }
  if (real_type == static_cast<unsigned>(T::kEnum) || real_type == static_cast<unsigned>(T::kSet)) {
    if (length < 1 || length > 8) return std::unexpected(DecodeError::kProtocolValue);
    return readInteger(r, length, true);
  }
  return readBytesWithLength(r, length > 255 ? 2 : 1);
}

}  // namespace

DecodeResult<BinlogValue> readBinlogValue(Reader& r, uint8_t type, uint16_t meta, bool is_unsigned) {
  switch (static_cast<ColumnType>(type)) {
    case T::kTiny: return readInteger(r, 1, is_unsigned);
    case T::kShort: return readInteger(r, 2, is_unsigned);
    case T::kInt24: return readInteger(r, 3, is_unsigned);
    case T::kLong: return readInteger(r, 4, is_unsigned);
    case T::kLongLong: return readInteger(r, 8, is_unsigned);
    case T::kFloat: {
      SP_TRY(b, r.fixed(4));
      float f;
      std::memcpy(&f, b.data(), 4);
      BinlogValue v;
      v.kind = Kind::kDouble;
      v.d = f;
      return v;
    }
    case T::kDouble: {
      SP_TRY(b, r.fixed(8));
      BinlogValue v;
      v.kind = Kind::kDouble;
      std::memcpy(&v.d, b.data(), 8);
      return v;
    }
    case T::kNewDecimal: return readNewDecimal(r, meta);
    case T::kVarchar:
    case T::kVarString: return readBytesWithLength(r, meta > 255 ? 2 : 1);
    case T::kString: return readString(r, meta);
    case T::kEnum:
    case T::kSet: return readInteger(r, meta & 0xff, true);
    case T::kBlob:
    case T::kTinyBlob:
    case T::kMediumBlob:
    case T::kLongBlob:
    case T::kGeometry:
    case T::kJson:
      if (meta < 1 || meta > 4) return std::unexpected(DecodeError::kProtocolValue);
      return readBytesWithLength(r, meta);
    case T::kYear: {
      SP_TRY(y, r.u8());
      return textValue(Kind::kTemporal, y == 0 ? "0000" : std::to_string(1900 + y));
    }
    case T::kDate:
    case T::kNewDate: {
      SP_TRY(v, r.u24());
      return textValue(Kind::kTemporal, dateText(v >> 9, (v >> 5) & 15, v & 31));
    }
    case T::kTimestamp: {
      SP_TRY(seconds, r.u32());
      return textValue(Kind::kTemporal, timestampText(seconds, 0, 0));
    }
    case T::kTimestamp2: {
      if (meta > 6) return std::unexpected(DecodeError::kProtocolValue);
      SP_TRY(seconds, readBigEndian(r, 4));
      SP_TRY(usec, readFraction(r, meta));
      return textValue(Kind::kTemporal, timestampText(seconds, usec, meta));
    }
    case T::kDateTime2: return readDateTime2(r, meta);
    case T::kTime2: return readTime2(r, meta);
    case T::kBit: {
      const unsigned bytes = (meta >> 8) + ((meta & 0xff) ? 1 : 0);
      if (bytes < 1 || bytes > 8) return std::unexpected(DecodeError::kProtocolValue);
      SP_TRY(v, readBigEndian(r, bytes));
      return uintValue(v, Kind::kBit);
    }
    case T::kNull: return BinlogValue{};
    default:
      // DECIMAL before 5.0, old DATETIME/TIME: not written by MariaDB 10.11
      // for tables it created.
      return std::unexpected(DecodeError::kProtocolValue);
  }
}

std::string binlogValueLiteral(const BinlogValue& v) {
  switch (v.kind) {
    case Kind::kNull: return "NULL";
    case Kind::kInt: return std::to_string(v.i);
    case Kind::kUInt:
    case Kind::kBit: return std::to_string(v.u);
    case Kind::kDouble: {
      // Exponent form: the server reads it as a DOUBLE (not a DECIMAL); the
      // shortest digits that read back as the same double (a FLOAT's value
      // widened to double reads back, then narrows, to the same FLOAT).
      char buf[40];
      auto res = std::to_chars(buf, buf + sizeof buf, v.d, std::chars_format::scientific);
      return std::string(buf, res.ptr);
    }
    case Kind::kDecimal: return v.text;
    case Kind::kTemporal: return "'" + v.text + "'";
    case Kind::kBytes: return hexLiteral(v.text);
  }
  return "NULL";
}

}  // namespace sp::protocol
