#include "parser/keywords.hpp"

#include <algorithm>
#include <cstdint>
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

constexpr uint32_t hashWord(std::string_view upper) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : upper) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

// Open-addressing table built at compile time: one hash and usually one
// comparison per word, no allocation, no static-initialisation order issues.
constexpr size_t kHashSize = 1024;  // power of two, > 4x the keyword count
static_assert(kHashSize > 4 * kKeywordsById.size());
constexpr auto kHashTable = [] {
  std::array<uint16_t, kHashSize> table{};
  for (size_t i = 1; i < kKeywordsById.size(); ++i) {
    size_t slot = hashWord(kKeywordsById[i].name) & (kHashSize - 1);
    while (table[slot] != 0) slot = (slot + 1) & (kHashSize - 1);
    table[slot] = static_cast<uint16_t>(i);
  }
  return table;
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
  const std::string_view key(upper, word.size());
  for (size_t slot = hashWord(key) & (kHashSize - 1);; slot = (slot + 1) & (kHashSize - 1)) {
    const uint16_t index = kHashTable[slot];
    if (index == 0) return Keyword::kNone;
    if (kKeywordsById[index].name == key) return kKeywordsById[index].id;
  }
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
