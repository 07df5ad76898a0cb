// sql_mode parsing, charset lookup and MariaDB's multi-byte character rules
// (see dialect.hpp). Ranges follow MariaDB's strings/ctype-*.c my_ismbchar().
#include "parser/dialect.hpp"

#include <algorithm>
#include <array>

#include "parser/collations.hpp"

namespace sp::parser {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool dialectWordEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

struct NamedCharset {
  std::string_view name;
  Charset charset;
  CharsetStatus status;
};

// Every character set MariaDB 10.11 has (SELECT CHARACTER_SET_NAME FROM
// information_schema.CHARACTER_SETS), plus the alias utf8.
constexpr std::array<NamedCharset, 41> kCharsets = {{
    {"utf8mb4", Charset::kUtf8mb4, CharsetStatus::kOk},
    {"utf8mb3", Charset::kUtf8mb3, CharsetStatus::kOk},
    {"utf8", Charset::kUtf8mb3, CharsetStatus::kOk},
    {"latin1", Charset::kLatin1, CharsetStatus::kOk},
    {"ascii", Charset::kAscii, CharsetStatus::kOk},
    {"binary", Charset::kBinary, CharsetStatus::kOk},
    {"big5", Charset::kBig5, CharsetStatus::kOk},
    {"gbk", Charset::kGbk, CharsetStatus::kOk},
    {"gb2312", Charset::kGb2312, CharsetStatus::kOk},
    {"sjis", Charset::kSjis, CharsetStatus::kOk},
    {"cp932", Charset::kCp932, CharsetStatus::kOk},
    {"euckr", Charset::kEuckr, CharsetStatus::kOk},
    {"ujis", Charset::kUjis, CharsetStatus::kOk},
    {"eucjpms", Charset::kEucjpms, CharsetStatus::kOk},
    {"ucs2", Charset::kUtf8mb4, CharsetStatus::kNotClientCharset},
    {"utf16", Charset::kUtf8mb4, CharsetStatus::kNotClientCharset},
    {"utf16le", Charset::kUtf8mb4, CharsetStatus::kNotClientCharset},
    {"utf32", Charset::kUtf8mb4, CharsetStatus::kNotClientCharset},
    // 8-bit sets with their own ctype tables (whitespace and letters above
    // 0x7F; swe7 even below): not lexed here yet.
    {"armscii8", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp1250", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp1251", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp1256", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp1257", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp850", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp852", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"cp866", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"dec8", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"geostd8", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"greek", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"hebrew", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"hp8", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"keybcs2", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"koi8r", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"koi8u", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"latin2", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"latin5", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"latin7", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"macce", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"macroman", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"swe7", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
    {"tis620", Charset::kUtf8mb4, CharsetStatus::kUnsupported},
}};

// MySQL's gb18030 (and utf8mb4_0900 collations) do not exist in MariaDB
// 10.11: SET NAMES gb18030 is "Unknown character set".
constexpr std::array<std::string_view, 1> kKnownForeign = {"gb18030"};

bool in(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

size_t twoByte(bool lead, const unsigned char* p, const unsigned char* end, bool (*trail)(unsigned char)) {
  if (!lead) return 1;
  return end - p >= 2 && trail(p[1]) ? 2 : 0;
}

}  // namespace

CharsetLookup charsetByName(std::string_view name) {
  for (const NamedCharset& c : kCharsets) {
    if (dialectWordEquals(name, c.name)) return {c.charset, c.status, c.name};
  }
  for (std::string_view foreign : kKnownForeign) {
    if (dialectWordEquals(name, foreign)) return {Charset::kUtf8mb4, CharsetStatus::kUnsupported, {}};
  }
  // A collation name: its charset is the longest known prefix before '_'
  // ("utf8mb4_general_ci", "utf8_bin", "binary" handled above).
  for (size_t underscore = name.rfind('_'); underscore != std::string_view::npos && underscore > 0;
       underscore = name.rfind('_', underscore - 1)) {
    for (const NamedCharset& c : kCharsets) {
      if (dialectWordEquals(name.substr(0, underscore), c.name)) return {c.charset, c.status, c.name};
    }
  }
  return {Charset::kUtf8mb4, CharsetStatus::kUnknown, {}};
}

CharsetLookup charsetByCollationId(uint32_t id) {
  const detail::CollationEntry* begin = detail::kCollations;
  const detail::CollationEntry* end = begin + detail::kCollationCount;
  const auto* it = std::lower_bound(begin, end, id, [](const detail::CollationEntry& e, uint32_t v) {
    return e.id < v;
  });
  if (it == end || it->id != id) return {Charset::kUtf8mb4, CharsetStatus::kUnknown, {}};
  return charsetByName(it->charset);
}

std::string_view charsetName(Charset charset) {
  for (const NamedCharset& c : kCharsets) {
    if (c.charset == charset && c.status == CharsetStatus::kOk) return c.name;
  }
  return "?";
}

uint32_t serverVersionFromString(std::string_view version) {
  if (version.starts_with("5.5.5-")) version.remove_prefix(6);
  uint32_t parts[3] = {0, 0, 0};
  size_t i = 0;
  for (int part = 0; part < 3; ++part) {
    const size_t start = i;
    while (i < version.size() && version[i] >= '0' && version[i] <= '9' && i - start < 3) {
      parts[part] = parts[part] * 10 + static_cast<uint32_t>(version[i] - '0');
      ++i;
    }
    if (i == start) return 0;
    if (part < 2) {
      if (i >= version.size() || version[i] != '.') return 0;
      ++i;
    }
  }
  if (parts[1] > 99 || parts[2] > 99) return 0;
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

Dialect fromSqlMode(std::string_view sql_mode) {
  Dialect d;
  auto combination = [&d] {
    d.pipes_as_concat = d.ansi_quotes = d.ignore_space = true;
  };
  while (!sql_mode.empty()) {
    size_t comma = sql_mode.find(',');
    std::string_view mode = sql_mode.substr(0, comma);
    sql_mode.remove_prefix(comma == std::string_view::npos ? sql_mode.size() : comma + 1);
    while (!mode.empty() && (mode.front() == ' ' || mode.front() == '\'')) mode.remove_prefix(1);
    while (!mode.empty() && (mode.back() == ' ' || mode.back() == '\'')) mode.remove_suffix(1);
    if (dialectWordEquals(mode, "ANSI_QUOTES")) d.ansi_quotes = true;
    else if (dialectWordEquals(mode, "NO_BACKSLASH_ESCAPES")) d.no_backslash_escapes = true;
    else if (dialectWordEquals(mode, "PIPES_AS_CONCAT")) d.pipes_as_concat = true;
    else if (dialectWordEquals(mode, "IGNORE_SPACE")) d.ignore_space = true;
    else if (dialectWordEquals(mode, "HIGH_NOT_PRECEDENCE")) d.high_not_precedence = true;
    else if (dialectWordEquals(mode, "ANSI") || dialectWordEquals(mode, "DB2") ||
             dialectWordEquals(mode, "POSTGRESQL") || dialectWordEquals(mode, "MAXDB")) combination();
    else if (dialectWordEquals(mode, "MSSQL")) combination(), d.mssql_brackets = true;
    else if (dialectWordEquals(mode, "ORACLE")) combination(), d.oracle = true;
    else if (dialectWordEquals(mode, "MYSQL323") || dialectWordEquals(mode, "MYSQL40")) {
      d.high_not_precedence = true;
    }
  }
  return d;
}

bool needsMultiByteLexing(Charset charset) {
  switch (charset) {
    case Charset::kBig5: case Charset::kGbk: case Charset::kGb2312: case Charset::kSjis:
    case Charset::kCp932: case Charset::kEuckr: case Charset::kUjis: case Charset::kEucjpms:
      return true;
    default:
      return false;
  }
}

size_t mbCharLength(Charset charset, const unsigned char* p, const unsigned char* end) {
  const unsigned char c = *p;
  if (c < 0x80) return 1;
  switch (charset) {
    case Charset::kBig5:
      return twoByte(in(c, 0xA1, 0xF9), p, end,
                     [](unsigned char t) { return in(t, 0x40, 0x7E) || in(t, 0xA1, 0xFE); });
    case Charset::kGbk:
      return twoByte(in(c, 0x81, 0xFE), p, end,
                     [](unsigned char t) { return in(t, 0x40, 0x7E) || in(t, 0x80, 0xFE); });
    case Charset::kGb2312:
      return twoByte(in(c, 0xA1, 0xF7), p, end, [](unsigned char t) { return in(t, 0xA1, 0xFE); });
    case Charset::kSjis: case Charset::kCp932:
      return twoByte(in(c, 0x81, 0x9F) || in(c, 0xE0, 0xFC), p, end,
                     [](unsigned char t) { return in(t, 0x40, 0x7E) || in(t, 0x80, 0xFC); });
    case Charset::kEuckr:
      return twoByte(in(c, 0x81, 0xFE), p, end, [](unsigned char t) {
        return in(t, 0x41, 0x5A) || in(t, 0x61, 0x7A) || in(t, 0x81, 0xFE);
      });
    case Charset::kUjis: case Charset::kEucjpms: {
      const auto euc = [](unsigned char t) { return in(t, 0xA1, 0xFE); };
      if (c == 0x8E) return end - p >= 2 && in(p[1], 0xA1, 0xDF) ? 2 : 0;
      if (c == 0x8F) return end - p >= 3 && euc(p[1]) && euc(p[2]) ? 3 : 0;
      return twoByte(euc(c), p, end, euc);
    }
    default:
      return 1;
  }
}

}  // namespace sp::parser
