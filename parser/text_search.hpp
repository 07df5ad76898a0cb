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

}  // namespace sp::parser
