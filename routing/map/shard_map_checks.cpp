#include "routing/map/shard_map_checks.hpp"

#include <charconv>
#include <optional>

namespace sp::routing::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> parseDecimal(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string joinPath(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  bool all_digits = true;
  for (char c : s) {
    bool digit = c >= '0' && c <= '9';
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
    if (!digit && !word) return false;
    all_digits = all_digits && digit;
  }
  return !all_digits;
}

std::expected<std::vector<BucketRange>, std::string> parseRanges(std::string_view text, uint64_t max_value) {
  std::vector<BucketRange> ranges;
  if (trim(text).empty()) return std::unexpected("empty range list");
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    size_t dash = item.find('-');
    auto first = parseDecimal(trim(item.substr(0, dash)));
    auto last = dash == std::string_view::npos ? first : parseDecimal(trim(item.substr(dash + 1)));
    if (!first || !last) {
      return std::unexpected("'" + std::string(item) + "' is not a number or a range a-b");
    }
    if (*first > *last) return std::unexpected("range '" + std::string(item) + "' is reversed");
    if (*last > max_value) {
      return std::unexpected("'" + std::string(item) + "' is outside 0-" + std::to_string(max_value));
    }
    ranges.push_back({static_cast<uint32_t>(*first), static_cast<uint32_t>(*last)});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ranges;
}

std::string compressNumbers(std::span<const uint32_t> sorted_numbers) {
  std::string out;
  for (size_t i = 0; i < sorted_numbers.size();) {
    size_t j = i;
    while (j + 1 < sorted_numbers.size() && sorted_numbers[j + 1] == sorted_numbers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted_numbers[i]);
    if (j > i) out += '-' + std::to_string(sorted_numbers[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace sp::routing::detail
