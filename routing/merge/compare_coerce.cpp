#include "routing/merge/compare_coerce.hpp"

#include <cstdlib>

#include "parser/lexer.hpp"
#include "parser/literal_text.hpp"
#include "routing/merge/decimal.hpp"

namespace sp::routing {
namespace {

constexpr int64_t kMicros = 1000000;
constexpr int kYyPartYear = 70;  // two-digit years below 70 are 20YY, the others 19YY

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Reads up to `max` digits at `i`; how many were read in `count`.
uint64_t readDigits(std::string_view s, size_t& i, size_t max, size_t& count) {
  uint64_t v = 0;
  count = 0;
  while (i < s.size() && isDigit(s[i]) && count < max) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
    ++count;
  }
  return v;
}

// Fraction digits as microseconds: the first six, the rest cut off (as the server does).
int64_t readMicros(std::string_view s, size_t& i) {
  int64_t us = 0;
  size_t n = 0;
  for (; i < s.size() && isDigit(s[i]); ++i, ++n) {
    if (n < 6) us = us * 10 + (s[i] - '0');
  }
  for (; n < 6; ++n) us *= 10;
  return us;
}

struct Fields {
  uint64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int64_t micros = 0;
};

// Packed value, or 0 (the zero datetime) when a field is out of range. Days
// up to 31 in every month and zero months/days pass: comparisons use the
// server's fuzzy date rules ('2025-02-30' > '2025-02-28 23:59:59').
int64_t pack(const Fields& f) {
  if (f.year > 9999 || f.month > 12 || f.day > 31 || f.hour > 23 || f.minute > 59 || f.second > 59) return 0;
  auto ymd = static_cast<int64_t>((f.year * 13 + f.month) * 32 + f.day);
  auto hms = static_cast<int64_t>((f.hour * 60 + f.minute) * 60 + f.second);
  return (ymd * 86400 + hms) * kMicros + f.micros;
}

uint64_t fullYear(uint64_t yy) { return yy < kYyPartYear ? 2000 + yy : 1900 + yy; }

// Digits only: YYMMDD, YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss (then .frac).
int64_t datetimeFromDigits(std::string_view s, size_t start, size_t len) {
  if (len != 6 && len != 8 && len != 12 && len != 14) return 0;
  size_t i = start, n = 0;
  size_t year_digits = (len == 8 || len == 14) ? 4 : 2;
  Fields f;
  f.year = readDigits(s, i, year_digits, n);
  if (year_digits == 2) f.year = fullYear(f.year);
  f.month = readDigits(s, i, 2, n);
  f.day = readDigits(s, i, 2, n);
  if (len >= 12) {
    f.hour = readDigits(s, i, 2, n);
    f.minute = readDigits(s, i, 2, n);
    f.second = readDigits(s, i, 2, n);
    if (i < s.size() && s[i] == '.') f.micros = readMicros(s, ++i);
  }
  return pack(f);
}

bool isDelimiter(char c) { return c != '\0' && !isDigit(c) && c != ' ' && c != '\t' && c != 'T'; }

// Optional time after a delimited date: [ T]+h[:m[:s[.frac]]]; stops at anything else.
void readTimeOfDay(std::string_view s, size_t i, Fields& f) {
  size_t n = 0;
  bool separated = false;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == 'T')) ++i, separated = true;
  if (!separated) return;
  f.hour = readDigits(s, i, 2, n);
  if (n == 0) return;
  if (i + 1 < s.size() && s[i] == ':' && isDigit(s[i + 1])) {
    f.minute = readDigits(s, ++i, 2, n);
    if (i + 1 < s.size() && s[i] == ':' && isDigit(s[i + 1])) {
      f.second = readDigits(s, ++i, 2, n);
      if (i < s.size() && s[i] == '.') f.micros = readMicros(s, ++i);
    }
  }
}

double toDouble(std::string_view s) {
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

int sign(double x, double y) { return x < y ? -1 : x > y ? 1 : 0; }
int sign(int64_t x, int64_t y) { return x < y ? -1 : x > y ? 1 : 0; }

}  // namespace

namespace temporal {

std::optional<int64_t> parseDatetime(std::string_view s) {
  // YYYY-MM-DD[ hh:mm:ss[.f]]: fixed positions.
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  Fields f;
  size_t i = 0, n = 0;
  f.year = readDigits(s, i, 4, n);
  if (n != 4) return std::nullopt;
  i = 5;
  f.month = readDigits(s, i, 2, n);
  i = 8;
  f.day = readDigits(s, i, 2, n);
  if (n != 2) return std::nullopt;
  if (s.size() > 10) {
    if (s.size() < 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':') return std::nullopt;
    i = 11;
    f.hour = readDigits(s, i, 2, n);
    i = 14;
    f.minute = readDigits(s, i, 2, n);
    i = 17;
    f.second = readDigits(s, i, 2, n);
    if (s.size() > 19) {
      if (s[19] != '.') return std::nullopt;
      i = 20;
      f.micros = readMicros(s, i);
    }
  }
  if (f.month > 12 || f.day > 31 || f.hour > 23 || f.minute > 59 || f.second > 59) return std::nullopt;
  return pack(f);
}

std::optional<int64_t> parseTime(std::string_view s) {
  size_t i = 0, n = 0;
  bool negative = !s.empty() && s[0] == '-';
  if (negative) ++i;
  uint64_t h = readDigits(s, i, 4, n);
  if (n == 0 || i >= s.size() || s[i] != ':') return std::nullopt;
  uint64_t m = readDigits(s, ++i, 2, n);
  if (n != 2 || i >= s.size() || s[i] != ':') return std::nullopt;
  uint64_t sec = readDigits(s, ++i, 2, n);
  if (n != 2) return std::nullopt;
  int64_t us = 0;
  if (i < s.size()) {
    if (s[i] != '.') return std::nullopt;
    us = readMicros(s, ++i);
  }
  int64_t v = static_cast<int64_t>((h * 60 + m) * 60 + sec) * kMicros + us;
  return negative ? -v : v;
}

int64_t datetimeFromString(std::string_view s) {
  size_t i = 0, n = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t start = i;
  Fields f;
  f.year = readDigits(s, i, 20, n);
  if (n == 0) return 0;
  if (n > 4) return datetimeFromDigits(s, start, n);
  if (n == 2) f.year = fullYear(f.year);
  // Delimited: year, month and day must all be there ('2025-03' is the zero datetime).
  if (i >= s.size() || !isDelimiter(s[i])) return 0;
  f.month = readDigits(s, ++i, 2, n);
  if (n == 0 || i >= s.size() || !isDelimiter(s[i])) return 0;
  f.day = readDigits(s, ++i, 2, n);
  if (n == 0) return 0;
  readTimeOfDay(s, i, f);
  return pack(f);
}

int64_t datetimeFromNumber(std::string_view s) {
  if (s.empty() || s[0] == '-') return 0;
  size_t i = s[0] == '+' ? 1 : 0, n = 0;
  uint64_t nr = readDigits(s, i, 19, n);
  if (n == 0 || (i < s.size() && isDigit(s[i]))) return 0;
  int64_t micros = 0;
  if (i < s.size() && s[i] == '.') micros = readMicros(s, ++i);
  // The server's number_to_datetime ranges.
  if (nr == 0) return 0;
  if (nr < 101) return 0;
  if (nr <= 691231) {
    nr = (nr + 20000000) * 1000000;
  } else if (nr < 700101) {
    return 0;
  } else if (nr <= 991231) {
    nr = (nr + 19000000) * 1000000;
  } else if (nr < 10000101) {
    return 0;
  } else if (nr <= 99991231) {
    nr *= 1000000;
  } else if (nr < 101000000) {
    return 0;
  } else if (nr <= 691231235959ull) {
    nr += 20000000000000ull;
  } else if (nr < 700101000000ull) {
    return 0;
  } else if (nr <= 991231235959ull) {
    nr += 19000000000000ull;
  } else if (nr < 10000101000000ull || nr > 99999999999999ull) {
    return 0;
  }
  uint64_t date = nr / 1000000, clock = nr % 1000000;
  Fields f{date / 10000, date / 100 % 100, date % 100, clock / 10000, clock / 100 % 100, clock % 100, micros};
  return pack(f);
}

int64_t timeFromNumber(std::string_view s) {
  size_t i = 0, n = 0;
  bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) ++i;
  uint64_t nr = readDigits(s, i, 19, n);
  int64_t us = 0;
  if (i < s.size() && s[i] == '.') us = readMicros(s, ++i);
  uint64_t h = nr / 10000, m = nr / 100 % 100, sec = nr % 100;
  if (m > 59 || sec > 59 || h > 838) return 0;
  int64_t v = static_cast<int64_t>((h * 60 + m) * 60 + sec) * kMicros + us;
  return negative ? -v : v;
}

int64_t timeFromString(std::string_view s) {
  size_t i = 0, n = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (s.find(':', i) == std::string_view::npos) return timeFromNumber(s.substr(i));
  bool negative = i < s.size() && s[i] == '-';
  if (negative) ++i;
  uint64_t h = readDigits(s, i, 6, n);
  if (n == 0) return 0;
  if (i < s.size() && s[i] == ' ') {  // D h:m:s
    size_t nh = 0;
    uint64_t hours = readDigits(s, ++i, 2, nh);
    h = h * 24 + hours;
  }
  uint64_t m = 0, sec = 0;
  int64_t us = 0;
  if (i + 1 < s.size() && s[i] == ':' && isDigit(s[i + 1])) {
    m = readDigits(s, ++i, 2, n);
    if (i + 1 < s.size() && s[i] == ':' && isDigit(s[i + 1])) {
      sec = readDigits(s, ++i, 2, n);
      if (i < s.size() && s[i] == '.') us = readMicros(s, ++i);
    }
  }
  if (m > 59 || sec > 59 || h > 838) return 0;
  int64_t v = static_cast<int64_t>((h * 60 + m) * 60 + sec) * kMicros + us;
  return negative ? -v : v;
}

}  // namespace temporal

double stringToDouble(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  size_t start = i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && isDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && isDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && isDigit(s[j])) {
      while (j < s.size() && isDigit(s[j])) ++j;
      i = j;
    }
  }
  return toDouble(s.substr(start, i - start));
}

int compareWithLiteral(ValueClass cls, std::string_view value, LiteralType type, std::string_view literal) {
  bool string_literal = type == LiteralType::kString;
  switch (cls) {
    case ValueClass::kExact:
      if (!string_literal && decimal::isDecimal(value) && decimal::isDecimal(literal)) {
        return decimal::compare(value, literal);
      }
      return sign(toDouble(value), stringToDouble(literal));
    case ValueClass::kFloat:
      return sign(toDouble(value), stringToDouble(literal));
    case ValueClass::kText:
    case ValueClass::kBinary:
      if (string_literal) return compareValues(cls, value, literal);
      return sign(stringToDouble(value), stringToDouble(literal));
    case ValueClass::kDatetime: {
      int64_t lit = string_literal ? temporal::datetimeFromString(literal) : temporal::datetimeFromNumber(literal);
      return sign(temporal::parseDatetime(value).value_or(0), lit);
    }
    case ValueClass::kTime: {
      int64_t lit = string_literal ? temporal::timeFromString(literal) : temporal::timeFromNumber(literal);
      return sign(temporal::parseTime(value).value_or(0), lit);
    }
  }
  return 0;
}

std::expected<HavingLiteral, std::string> havingLiteral(const parser::Expr& e, std::string_view sql) {
  std::string text(parser::literalText(e, sql));
  switch (e.literal_kind) {
    case parser::LiteralKind::kNull: return HavingLiteral{LiteralType::kExact, std::nullopt};
    case parser::LiteralKind::kTrue: return HavingLiteral{LiteralType::kExact, "1"};
    case parser::LiteralKind::kFalse: return HavingLiteral{LiteralType::kExact, "0"};
    case parser::LiteralKind::kInteger:
    case parser::LiteralKind::kDecimal:
      if (!decimal::isDecimal(text)) break;
      return HavingLiteral{LiteralType::kExact, text};
    case parser::LiteralKind::kString:
      // A plain quoted string only: DATE '..' / _binary'..' change how the server compares.
      if (text.empty() || (text[0] != '\'' && text[0] != '"')) {
        return std::unexpected("compares in HAVING with a typed or charset-introduced string (" + text + ")");
      }
      // A backslash reads differently with and without NO_BACKSLASH_ESCAPES.
      if (text.find('\\') != std::string::npos) {
        return std::unexpected("compares in HAVING with a string holding a backslash (" + text + ")");
      }
      return HavingLiteral{LiteralType::kString, parser::unquoteString(text)};
    case parser::LiteralKind::kFloat:
      return std::unexpected("compares in HAVING with a floating-point literal (" + text + ")");
    default: break;
  }
  return std::unexpected("compares in HAVING with a literal the proxy cannot compare exactly (" + text + ")");
}

}  // namespace sp::routing
