// Cheap text scans that tell, before any lexing, that a statement cannot
// contain a word: a statement without the letters of `processlist` cannot
// name that table however it is quoted, commented or spaced. Used as
// pre-filters on the per-statement path, where a second lexing pass would
// cost more than the rest of the statement's checks together.
#pragma once

#include <string_view>

namespace sp::parser {

constexpr char lowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `text` contains `lower_word` with ASCII letters in any case;
// `lower_word` is spelled in lower case.
constexpr bool containsIgnoringAsciiCase(std::string_view text, std::string_view lower_word) {
  if (lower_word.empty()) return true;
  if (text.size() < lower_word.size()) return false;
  const char first = lower_word[0];
  const size_t last_start = text.size() - lower_word.size();
  for (size_t i = 0; i <= last_start; ++i) {
    if (lowerAscii(text[i]) != first) continue;
    size_t j = 1;
    while (j < lower_word.size() && lowerAscii(text[i + j]) == lower_word[j]) ++j;
    if (j == lower_word.size()) return true;
  }
  return false;
}

// Whether `name` spells `upper_word` (ASCII, upper case) as MariaDB matches
// information_schema table names: it lowers both with its utf8 case table,
// where two non-ASCII letters become ASCII ones: U+0130 (capital I with dot
// above) an `i` and U+212A (Kelvin sign) a `k`. So `PROCESSLİST`, and
// KEY_COLUMN_USAGE spelled with a Kelvin sign, name those tables (checked on MariaDB 10.11); the
// schema name is not matched this way (`İNFORMATION_SCHEMA` is another
// database). `name` is the identifier's UTF-8 text, unquoted.
constexpr bool equalsInformationSchemaName(std::string_view name, std::string_view upper_word) {
  size_t at = 0;
  for (char want : upper_word) {
    if (at >= name.size()) return false;
    if (want == 'I' && name.substr(at, 2) == "\xC4\xB0") {
      at += 2;
    } else if (want == 'K' && name.substr(at, 3) == "\xE2\x84\xAA") {
      at += 3;
    } else {
      const char c = name[at];
      if ((c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c) != want) return false;
      ++at;
    }
  }
  return at == name.size();
}

}  // namespace sp::parser
