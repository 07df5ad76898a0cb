#include "parser/keywords.hpp"

#include <algorithm>
#include <array>

namespace sp::parser {
namespace {

struct KeywordEntry {
  std::string_view name;
  Keyword id;
  bool reserved;
};

#define SP_PARSER_KEYWORD_ENTRY(name, reserved) KeywordEntry{#name, Keyword::k##name, reserved},
constexpr std::array kKeywordsById = {
    KeywordEntry{"", Keyword::kNone, false},
    SP_PARSER_KEYWORDS(SP_PARSER_KEYWORD_ENTRY)};
#undef SP_PARSER_KEYWORD_ENTRY

// Sorted by name at compile time so lookup is a binary search over a flat
// table: no hashing, no allocation, no static-initialisation order issues.
constexpr auto kKeywordsByName = [] {
  auto sorted = kKeywordsById;
  std::sort(sorted.begin() + 1, sorted.end(),
            [](const KeywordEntry& a, const KeywordEntry& b) { return a.name < b.name; });
  return sorted;
}();

constexpr size_t kMaxKeywordLength = [] {
  size_t max = 0;
  for (const auto& entry : kKeywordsById) max = std::max(max, entry.name.size());
  return max;
}();

}  // namespace

Keyword lookupKeyword(std::string_view word) {
  if (word.size() < 2 || word.size() > kMaxKeywordLength) return Keyword::kNone;
  char upper[kMaxKeywordLength];
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    upper[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  std::string_view key(upper, word.size());
  auto first = kKeywordsByName.begin() + 1;
  auto it = std::lower_bound(first, kKeywordsByName.end(), key,
                             [](const KeywordEntry& e, std::string_view k) { return e.name < k; });
  if (it == kKeywordsByName.end() || it->name != key) return Keyword::kNone;
  return it->id;
}

std::string_view keywordName(Keyword keyword) {
  auto index = static_cast<size_t>(keyword);
  return index < kKeywordsById.size() ? kKeywordsById[index].name : std::string_view{};
}

bool isReservedKeyword(Keyword keyword) {
  auto index = static_cast<size_t>(keyword);
  return index < kKeywordsById.size() && kKeywordsById[index].reserved;
}

}  // namespace sp::parser
