#include "routing/merge_compare.hpp"

#include <charconv>
#include <cstdlib>

#include "routing/decimal.hpp"

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

// Case folding for the general_ci collations: ASCII and the two-byte UTF-8
// Latin-1 letters (à..þ fold to À..Þ, as general_ci's weights do). Accents
// are not stripped: utf8mb4_general_ci treats 'é' and 'e' as equal, which
// this approximation does not.
std::string fold(std::string_view s) {
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c >= 'a' && c <= 'z') {
      out[i] = static_cast<char>(c - 32);
    } else if (c == 0xC3 && i + 1 < out.size()) {
      unsigned char d = static_cast<unsigned char>(out[i + 1]);
      if (d >= 0xA0 && d <= 0xBE && d != 0xB7) out[i + 1] = static_cast<char>(d - 0x20);
      ++i;
    }
  }
  return out;
}

double toDouble(std::string_view s) {
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
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
    default:
      return ValueClass::kBinary;  // dates, times, bit: canonical text orders like the value
  }
}

int compareValues(ValueClass cls, const std::optional<std::string_view>& a, const std::optional<std::string_view>& b) {
  if (!a || !b) return a ? 1 : b ? -1 : 0;
  switch (cls) {
    case ValueClass::kExact:
      if (decimal::isDecimal(*a) && decimal::isDecimal(*b)) return decimal::compare(*a, *b);
      break;
    case ValueClass::kFloat: {
      double x = toDouble(*a), y = toDouble(*b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case ValueClass::kText: {
      std::string x = fold(trimTrailingSpaces(*a)), y = fold(trimTrailingSpaces(*b));
      int c = x.compare(y);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
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
      auto r = std::to_chars(buf, buf + sizeof buf, toDouble(*value));
      key.append(buf, r.ptr);
      break;
    }
    case ValueClass::kText: key += fold(trimTrailingSpaces(*value)); break;
    case ValueClass::kBinary: key += *value; break;
  }
  return key;
}

}  // namespace sp::routing
