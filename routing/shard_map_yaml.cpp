#include "routing/shard_map_yaml.hpp"

#include <algorithm>
#include <charconv>

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

std::string describeType(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return node.Tag() == "!" ? "a quoted string" : "'" + node.Scalar() + "'";
    default: return "an undefined value";
  }
}

}  // namespace

void IssueSink::add(std::string path, const YAML::Node& at, std::string message) {
  add(std::move(path), lineOf(at), std::move(message));
}

int lineOf(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string joinPath(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::vector<MapEntry> mapEntries(IssueSink& sink, const YAML::Node& map, const std::string& path) {
  std::vector<MapEntry> entries;
  // By value: yaml-cpp's iterator hands out a temporary pair, so a reference
  // to it->first would dangle (ASan: stack-use-after-scope).
  for (const auto& kv : map) {
    YAML::Node key = kv.first;
    YAML::Node value = kv.second;
    if (!key.IsScalar()) {
      sink.add(path, key, "mapping keys must be plain words, got " + describeType(key));
      continue;
    }
    bool duplicate = std::any_of(entries.begin(), entries.end(),
                                 [&](const MapEntry& e) { return e.key == key.Scalar(); });
    if (duplicate) {
      sink.add(joinPath(path, key.Scalar()), key, "duplicate key '" + key.Scalar() + "'");
      continue;
    }
    entries.push_back({key.Scalar(), key, value});
  }
  return entries;
}

void reportUnknownKeys(IssueSink& sink, std::span<const MapEntry> entries, const std::string& path,
                       std::span<const std::string_view> allowed) {
  for (const auto& entry : entries) {
    if (std::find(allowed.begin(), allowed.end(), entry.key) != allowed.end()) continue;
    std::string message = "unknown key '" + entry.key + "'";
    for (std::string_view candidate : allowed) {
      bool prefix = entry.key.size() >= 3 && (candidate.starts_with(entry.key) || entry.key.starts_with(candidate));
      if (editDistance(entry.key, candidate) <= 2 || prefix) {
        message += " (did you mean '" + std::string(candidate) + "'?)";
        break;
      }
    }
    sink.add(joinPath(path, entry.key), entry.key_node, std::move(message));
  }
}

const MapEntry* findEntry(std::span<const MapEntry> entries, std::string_view key) {
  for (const auto& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

bool expectMap(IssueSink& sink, const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) return true;
  sink.add(path, node, "expected a mapping, got " + describeType(node));
  return false;
}

std::optional<uint64_t> readUInt(IssueSink& sink, const YAML::Node& node, const std::string& path,
                                 uint64_t min, uint64_t max) {
  std::optional<uint64_t> value;
  if (node.IsScalar() && node.Tag() != "!") value = parseDecimal(node.Scalar());
  if (!value) {
    sink.add(path, node, "expected an integer, got " + describeType(node));
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    sink.add(path, node,
             "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                 node.Scalar());
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> readString(IssueSink& sink, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return node.Scalar();
  sink.add(path, node, "expected a string, got " + describeType(node));
  return std::nullopt;
}

std::optional<std::string> readIdentifier(IssueSink& sink, const YAML::Node& node,
                                          const std::string& path) {
  auto text = readString(sink, node, path);
  if (!text) return std::nullopt;
  if (!isIdentifier(*text)) {
    sink.add(path, node,
             "'" + *text + "' is not a plain SQL identifier (letters, digits, _ and $; at most 64 bytes)");
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> readChoice(IssueSink& sink, const YAML::Node& node, const std::string& path,
                                      std::span<const std::string_view> choices) {
  auto text = readString(sink, node, path);
  if (!text) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *text) != choices.end()) return text;
  std::string list;
  for (std::string_view c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  sink.add(path, node, "'" + *text + "' is not one of: " + list);
  return std::nullopt;
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

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace sp::routing::detail
