// Binary-protocol values <-> the text the text protocol shows for them.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "protocol/binary_detail.hpp"
#include "protocol/binary_value.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

using detail::WireLayout;

namespace {

// MariaDB's "not fixed" decimals of FLOAT/DOUBLE columns (NOT_FIXED_DEC):
// decimals below it mean a fixed number of digits after the point.
constexpr uint8_t kNotFixedDecimals = 31;
constexpr uint8_t kMaxFractionDigits = 6;
// MariaDB prints FLOAT with FLT_DIG significant digits.
constexpr int kFloatDigits = 6;
// my_gcvt uses the 'f' format for decimal exponents in [-14, 15]
// (MAX_DECPT_FOR_F_FORMAT = DBL_DIG), or when digits follow the point.
constexpr int kMaxDecptForFixed = 15;
// Integer display widths stop at 255; a larger column_length from the wire
// must not drive a huge ZEROFILL padding.
constexpr uint32_t kMaxDisplayWidth = 255;

void appendUnsigned(std::string& out, uint64_t v, size_t min_width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  size_t n = static_cast<size_t>(end - buf);
  if (n < min_width) out.append(min_width - n, '0');
  out.append(buf, n);
}

void appendSigned(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// Significant digits (no trailing zeros) and decimal point position of |v|:
// |v| = 0.DIGITS * 10^decpt. `precision` < 0 asks for the shortest digits that
// round-trip; otherwise that many significant digits, correctly rounded.
void decimalDigits(double v, int precision, std::string& digits, int& decpt) {
  char buf[64];
  auto r = precision < 0 ? std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific)
                         : std::to_chars(buf, buf + sizeof buf, std::fabs(v),
                                         std::chars_format::scientific, precision - 1);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));  // d[.ddd]e±XX
  size_t e = s.find('e');
  digits.clear();
  for (char c : s.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = 0;
  std::string_view exp_text = s.substr(e + 1);
  if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  decpt = exponent + 1;
}

// MariaDB's my_gcvt layout: plain decimal notation for moderate exponents,
// otherwise d.ddde[-]X with no '+' and no leading exponent zeros.
std::string formatGeneral(double v, int precision) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) {
    if (v == 0) return "0";
    return std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
  }
  std::string digits;
  int decpt = 0;
  decimalDigits(v, precision, digits, decpt);
  int len = static_cast<int>(digits.size());
  std::string out = v < 0 ? "-" : "";
  bool fixed = decpt >= 1 - kMaxDecptForFixed && (decpt <= kMaxDecptForFixed || len > decpt);
  if (!fixed) {
    out += digits[0];
    if (len > 1) out += "." + digits.substr(1);
    out += "e" + std::to_string(decpt - 1);
  } else if (decpt <= 0) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt < len) {
    out += digits.substr(0, decpt) + "." + digits.substr(decpt);
  } else {
    out += digits + std::string(static_cast<size_t>(decpt - len), '0');
  }
  return out;
}

std::string formatFixed(double v, int decimals) {
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc{}) return formatGeneral(v, -1);
  return std::string(buf, r.ptr);
}

void appendDate(std::string& out, const BinaryDateTime& d) {
  appendUnsigned(out, d.year, 4);
  out += '-';
  appendUnsigned(out, d.month, 2);
  out += '-';
  appendUnsigned(out, d.day, 2);
}

void appendClock(std::string& out, uint64_t hours, uint8_t minute, uint8_t second,
                 uint32_t microsecond, uint8_t decimals) {
  appendUnsigned(out, hours, 2);
  out += ':';
  appendUnsigned(out, minute, 2);
  out += ':';
  appendUnsigned(out, second, 2);
  if (decimals == 0) return;
  std::string fraction;
  appendUnsigned(fraction, microsecond, kMaxFractionDigits);
  out += '.';
  out += fraction.substr(0, decimals);
}

// The digits after the point: the column's decimals; for "any precision"
// decimals (31, from some expressions), six when there is a fraction.
uint8_t fractionDigits(uint8_t decimals, uint32_t microsecond) {
  if (decimals <= kMaxFractionDigits) return decimals;
  return microsecond != 0 ? kMaxFractionDigits : 0;
}

std::string dateTimeText(const BinaryDateTime& d, ColumnType type, uint8_t decimals) {
  std::string out;
  appendDate(out, d);
  if (detail::isDateOnly(type)) return out;
  out += ' ';
  appendClock(out, d.hour, d.minute, d.second, d.microsecond, fractionDigits(decimals, d.microsecond));
  return out;
}

std::string timeText(const BinaryTime& t, uint8_t decimals) {
  std::string out = t.negative ? "-" : "";
  appendClock(out, uint64_t{t.days} * 24 + t.hour, t.minute, t.second, t.microsecond,
              fractionDigits(decimals, t.microsecond));
  return out;
}

std::string floatText(double v, uint8_t decimals, int precision) {
  if (decimals < kNotFixedDecimals) return formatFixed(v, decimals);
  return formatGeneral(v, precision);
}

}  // namespace

std::optional<std::string> toText(const BinaryValue& v, const ColumnDefinition41& column) {
  struct Visitor {
    const ColumnDefinition41& c;
    size_t zerofillWidth() const {
      if (!(c.flags & column_flag::kZerofill)) return 0;
      return std::min(c.column_length, kMaxDisplayWidth);
    }
    std::optional<std::string> operator()(NullValue) const { return std::nullopt; }
    std::optional<std::string> operator()(LongDataValue) const { return std::nullopt; }
    std::optional<std::string> operator()(int64_t i) const {
      std::string out;
      if (i >= 0) {
        appendUnsigned(out, static_cast<uint64_t>(i), zerofillWidth());
      } else {
        appendSigned(out, i);
      }
      return out;
    }
    std::optional<std::string> operator()(uint64_t u) const {
      std::string out;
      appendUnsigned(out, u, zerofillWidth());
      return out;
    }
    std::optional<std::string> operator()(float f) const { return floatText(f, c.decimals, kFloatDigits); }
    std::optional<std::string> operator()(double d) const { return floatText(d, c.decimals, -1); }
    std::optional<std::string> operator()(const BinaryDateTime& d) const {
      return dateTimeText(d, c.type, c.decimals);
    }
    std::optional<std::string> operator()(const BinaryTime& t) const { return timeText(t, c.decimals); }
    std::optional<std::string> operator()(std::string_view s) const { return std::string(s); }
  };
  return std::visit(Visitor{column}, v);
}

// ---------------------------------------------------------------- text -> value

namespace {

DecodeError bad() { return DecodeError::kProtocolValue; }

template <class T>
DecodeResult<T> parseNumber(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::unexpected(bad());
  return v;
}

// Exactly `n` decimal digits at the front of `s`, consumed.
DecodeResult<uint32_t> takeDigits(std::string_view& s, size_t n) {
  if (s.size() < n) return std::unexpected(bad());
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::unexpected(bad());
    v = v * 10 + static_cast<uint32_t>(s[i] - '0');
  }
  s.remove_prefix(n);
  return v;
}

DecodeResult<void> takeChar(std::string_view& s, char c) {
  if (s.empty() || s[0] != c) return std::unexpected(bad());
  s.remove_prefix(1);
  return {};
}

// ".f" to ".ffffff" (or nothing) -> microseconds.
DecodeResult<uint32_t> takeFraction(std::string_view& s) {
  if (s.empty()) return 0u;
  SP_TRY_VOID(takeChar(s, '.'));
  if (s.empty() || s.size() > kMaxFractionDigits) return std::unexpected(bad());
  size_t n = s.size();
  SP_TRY(digits, takeDigits(s, n));
  for (size_t i = n; i < kMaxFractionDigits; ++i) digits *= 10;
  return digits;
}

// HH:MM:SS[.ffffff] after the hours were taken.
DecodeResult<void> takeMinutesSeconds(std::string_view& s, uint8_t& minute, uint8_t& second,
                                      uint32_t& micro) {
  SP_TRY_VOID(takeChar(s, ':'));
  SP_TRY(m, takeDigits(s, 2));
  SP_TRY_VOID(takeChar(s, ':'));
  SP_TRY(sec, takeDigits(s, 2));
  SP_TRY(frac, takeFraction(s));
  minute = static_cast<uint8_t>(m);
  second = static_cast<uint8_t>(sec);
  micro = frac;
  return {};
}

DecodeResult<BinaryValue> parseDateTime(std::string_view s) {
  BinaryDateTime d;
  SP_TRY(year, takeDigits(s, 4));
  SP_TRY_VOID(takeChar(s, '-'));
  SP_TRY(month, takeDigits(s, 2));
  SP_TRY_VOID(takeChar(s, '-'));
  SP_TRY(day, takeDigits(s, 2));
  d.year = static_cast<uint16_t>(year);
  d.month = static_cast<uint8_t>(month);
  d.day = static_cast<uint8_t>(day);
  if (s.empty()) return BinaryValue{d};
  SP_TRY_VOID(takeChar(s, ' '));
  SP_TRY(hour, takeDigits(s, 2));
  d.hour = static_cast<uint8_t>(hour);
  SP_TRY_VOID(takeMinutesSeconds(s, d.minute, d.second, d.microsecond));
  return BinaryValue{d};
}

DecodeResult<BinaryValue> parseTime(std::string_view s) {
  BinaryTime t;
  if (!s.empty() && s[0] == '-') {
    t.negative = true;
    s.remove_prefix(1);
  }
  size_t colon = s.find(':');
  if (colon < 2 || colon == std::string_view::npos || colon > 9) return std::unexpected(bad());
  SP_TRY(hours, takeDigits(s, colon));
  t.days = hours / 24;
  t.hour = static_cast<uint8_t>(hours % 24);
  SP_TRY_VOID(takeMinutesSeconds(s, t.minute, t.second, t.microsecond));
  return BinaryValue{t};
}

// Integer text for a column of `width` bytes, range-checked.
DecodeResult<BinaryValue> parseInt(std::string_view s, BinaryType t) {
  BinaryValue v;
  if (t.is_unsigned) {
    SP_TRY(u, parseNumber<uint64_t>(s));
    v = u;
  } else {
    SP_TRY(i, parseNumber<int64_t>(s));
    v = i;
  }
  // Reuse the encoder's range check so text and wire agree.
  Bytes scratch;
  SP_TRY_VOID(encodeBinaryValue(v, t, scratch));
  return v;
}

}  // namespace

DecodeResult<BinaryValue> fromText(std::optional<std::string_view> text,
                                   const ColumnDefinition41& column) {
  if (!text) return BinaryValue{NullValue{}};
  BinaryType t = binaryTypeOf(column);
  switch (detail::layoutOf(column.type)) {
    case WireLayout::kInt1:
    case WireLayout::kInt2:
    case WireLayout::kInt4:
    case WireLayout::kInt8:
      return parseInt(*text, t);
    case WireLayout::kFloat: {
      SP_TRY(f, parseNumber<float>(*text));
      return BinaryValue{f};
    }
    case WireLayout::kDouble: {
      SP_TRY(d, parseNumber<double>(*text));
      return BinaryValue{d};
    }
    case WireLayout::kDateTime:
      return parseDateTime(*text);
    case WireLayout::kTime:
      return parseTime(*text);
    case WireLayout::kLenenc:
      return BinaryValue{*text};
    case WireLayout::kNone:
    case WireLayout::kUnknown:
      break;
  }
  return std::unexpected(bad());
}

// ---------------------------------------------------------------- routing view

DecodeResult<ParamDescription> describeParam(const BinaryValue& v, BinaryType t) {
  using Kind = ParamDescription::Kind;
  ParamDescription p;
  if (std::holds_alternative<NullValue>(v)) return p;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    p.kind = Kind::kSigned;
    p.i = *i;
  } else if (const auto* u = std::get_if<uint64_t>(&v)) {
    p.kind = Kind::kUnsigned;
    p.u = *u;
  } else if (const auto* f = std::get_if<float>(&v)) {
    p.kind = Kind::kDouble;
    p.d = *f;
  } else if (const auto* d = std::get_if<double>(&v)) {
    p.kind = Kind::kDouble;
    p.d = *d;
  } else if (const auto* dt = std::get_if<BinaryDateTime>(&v)) {
    p.kind = Kind::kString;
    p.s = dateTimeText(*dt, t.type, dt->microsecond != 0 ? kMaxFractionDigits : 0);
  } else if (const auto* tm = std::get_if<BinaryTime>(&v)) {
    p.kind = Kind::kString;
    p.s = timeText(*tm, tm->microsecond != 0 ? kMaxFractionDigits : 0);
  } else if (const auto* s = std::get_if<std::string_view>(&v)) {
    bool decimal = t.type == ColumnType::kDecimal || t.type == ColumnType::kNewDecimal;
    p.kind = decimal ? Kind::kDecimal : Kind::kString;
    p.s = std::string(*s);
  } else {
    return std::unexpected(bad());  // LongDataValue: the caller substitutes the data first
  }
  return p;
}

}  // namespace sp::protocol
