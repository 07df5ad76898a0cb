#include "routing/merge/merge_compare.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "routing/merge/compare_coerce.hpp"
#include "routing/merge/decimal.hpp"

namespace sp::routing {
namespace {

using protocol::ColumnType;

constexpr uint16_t kBinaryCharset = 63;

bool binaryCollation(uint16_t id) {
  // binary, latin1_bin, utf8mb3_bin, utf8mb4_bin, ascii_bin (and the utf8mb4 nopad bin)
  return id == kBinaryCharset || id == 47 || id == 83 || id == 46 || id == 65 || id == 1091;
}

std::string_view trimTrailingSpaces(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// utf8mb4_general_ci weights: one weight per code point, compared in
// order. ASCII letters fold to upper case; the Latin-1 letters fold to their
// base letter as general_ci does (é = e, ß = s, ñ = n), while Æ, Ð, Ø, Þ keep
// weights of their own (above Z). Other code points weigh themselves: the
// server also folds Latin Extended and other scripts, which this does not.
uint32_t latin1Weight(uint32_t cp) {
  static constexpr char kBase[] =
      "AAAAAA\xC6" "CEEEEIIII" "\xD0" "NOOOOO\xD7\xD8" "UUUUY\xDE" "S"   // U+00C0..U+00DF
      "AAAAAA\xC6" "CEEEEIIII" "\xD0" "NOOOOO\xF7\xD8" "UUUUY\xDE" "Y";  // U+00E0..U+00FF
  return static_cast<unsigned char>(kBase[cp - 0xC0]);
}

uint32_t weightOf(uint32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp >= 0xC0 && cp <= 0xFF) return latin1Weight(cp);
  return cp;
}

// Weights as 3 bytes each (big-endian), so byte order is weight order.
std::string fold(std::string_view s) {
  std::string out;
  out.reserve(s.size() * 3);
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (len > 1 && i + len <= s.size()) {
      cp = c & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    } else {
      len = 1;
    }
    uint32_t w = weightOf(cp);
    out += static_cast<char>((w >> 16) & 0xFF);
    out += static_cast<char>((w >> 8) & 0xFF);
    out += static_cast<char>(w & 0xFF);
    i += len;
  }
  return out;
}

double compareAsDouble(std::string_view s) {
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

std::optional<int64_t> temporalValue(ValueClass cls, std::string_view text) {
  return cls == ValueClass::kTime ? temporal::parseTime(text) : temporal::parseDatetime(text);
}

}  // namespace

ValueClass classify(const protocol::ColumnDefinition41& column) {
  switch (column.type) {
    case ColumnType::kTiny: case ColumnType::kShort: case ColumnType::kLong: case ColumnType::kInt24:
    case ColumnType::kLongLong: case ColumnType::kDecimal: case ColumnType::kNewDecimal: case ColumnType::kYear:
      return ValueClass::kExact;
    case ColumnType::kFloat: case ColumnType::kDouble:
      return ValueClass::kFloat;
    case ColumnType::kVarchar: case ColumnType::kVarString: case ColumnType::kString: case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob: case ColumnType::kLongBlob: case ColumnType::kBlob: case ColumnType::kEnum:
    case ColumnType::kSet: case ColumnType::kJson:
      return binaryCollation(column.character_set) ? ValueClass::kBinary : ValueClass::kText;
    case ColumnType::kDate: case ColumnType::kNewDate: case ColumnType::kDateTime: case ColumnType::kDateTime2:
    case ColumnType::kTimestamp: case ColumnType::kTimestamp2:
      return ValueClass::kDatetime;
    case ColumnType::kTime: case ColumnType::kTime2:
      return ValueClass::kTime;
    default:
      return ValueClass::kBinary;  // bit, geometry: bytes
  }
}

int compareValues(ValueClass cls, const std::optional<std::string_view>& a, const std::optional<std::string_view>& b) {
  if (!a || !b) return a ? 1 : b ? -1 : 0;
  switch (cls) {
    case ValueClass::kExact:
      return decimal::compare(*a, *b);  // not a number (cannot happen for these types): bytes
    case ValueClass::kFloat: {
      double x = compareAsDouble(*a), y = compareAsDouble(*b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case ValueClass::kText: {
      std::string x = fold(trimTrailingSpaces(*a)), y = fold(trimTrailingSpaces(*b));
      int c = x.compare(y);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    case ValueClass::kDatetime:
    case ValueClass::kTime: {
      auto x = temporalValue(cls, *a), y = temporalValue(cls, *b);
      if (x && y) return *x < *y ? -1 : *x > *y ? 1 : 0;
      break;  // not the server's text form (cannot happen): bytes
    }
    case ValueClass::kBinary: break;
  }
  int c = a->compare(*b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

std::string groupKey(ValueClass cls, const std::optional<std::string_view>& value) {
  if (!value) return std::string(1, '\0');
  std::string key = "v";
  switch (cls) {
    case ValueClass::kExact: key += decimal::canonical(*value); break;
    case ValueClass::kFloat: {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, compareAsDouble(*value));
      key.append(buf, r.ptr);
      break;
    }
    case ValueClass::kText: key += fold(trimTrailingSpaces(*value)); break;
    case ValueClass::kDatetime:
    case ValueClass::kTime:
      if (auto v = temporalValue(cls, *value)) key += std::to_string(*v);
      else key += *value;
      break;
    case ValueClass::kBinary: key += *value; break;
  }
  return key;
}

namespace {

// |x| as length-prefixed digits + terminator: prefix-free, memcmp-ordered.
void appendMagnitude(std::string_view ints, std::string_view frac, std::string& out) {
  out += static_cast<char>((ints.size() >> 8) & 0xFF);
  out += static_cast<char>(ints.size() & 0xFF);
  out += ints;
  out += frac;
  out += '\0';
}

void appendExact(std::string_view t, std::string& out) {
  size_t i = 0;
  bool negative = !t.empty() && t[0] == '-';
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) ++i;
  size_t dot = t.find('.', i);
  std::string_view ints = t.substr(i, dot == std::string_view::npos ? std::string_view::npos : dot - i);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  while (!ints.empty() && ints.front() == '0') ints.remove_prefix(1);
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  if (ints.empty() && frac.empty()) {
    out += '\x01';  // zero, between negatives and positives
    return;
  }
  out += negative ? '\x00' : '\x02';
  size_t start = out.size();
  appendMagnitude(ints, frac, out);
  if (negative) {
    for (size_t k = start; k < out.size(); ++k) out[k] = static_cast<char>(~static_cast<unsigned char>(out[k]));
  }
}

void appendInt64(int64_t v, std::string& out) {
  auto bits = static_cast<uint64_t>(v) ^ (1ull << 63);  // two's complement -> offset binary
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((bits >> shift) & 0xFF);
}

void appendDouble(double v, std::string& out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  bits = (bits >> 63) ? ~bits : bits | (1ull << 63);
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((bits >> shift) & 0xFF);
}

// Bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x00: prefix-free.
void appendEscaped(std::string_view bytes, std::string& out) {
  for (char c : bytes) {
    out += c;
    if (c == '\0') out += '\xFF';
  }
  out += '\0';
  out += '\0';
}

}  // namespace

void appendSortKey(ValueClass cls, const std::optional<std::string_view>& value, bool descending, std::string& key) {
  size_t start = key.size();
  if (!value) {
    key += '\0';
  } else {
    key += '\x01';
    switch (cls) {
      case ValueClass::kExact:
        if (decimal::isDecimal(*value)) appendExact(*value, key);
        else appendEscaped(*value, key);
        break;
      case ValueClass::kFloat: appendDouble(compareAsDouble(*value), key); break;
      case ValueClass::kText: appendEscaped(fold(trimTrailingSpaces(*value)), key); break;
      case ValueClass::kDatetime:
      case ValueClass::kTime:
        // Server text always parses; the marker byte keeps a stray one apart.
        if (auto v = temporalValue(cls, *value)) {
          key += '\x01';
          appendInt64(*v, key);
        } else {
          key += '\x02';
          appendEscaped(*value, key);
        }
        break;
      case ValueClass::kBinary: appendEscaped(*value, key); break;
    }
  }
  if (descending) {
    for (size_t k = start; k < key.size(); ++k) key[k] = static_cast<char>(~static_cast<unsigned char>(key[k]));
  }
}

}  // namespace sp::routing
