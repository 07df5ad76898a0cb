#include "conf/yaml_walker.hpp"

#include <filesystem>

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace sp::conf::detail {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of adjacent characters each cost one (a swap is the commonest typo).
size_t editDistance(std::string_view a, std::string_view b) {
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * width + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

std::string joinWords(std::span<const std::string_view> words) {
  std::string out;
  for (auto w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return node.Tag() == "!" ? "a quoted string" : fmt::format("'{}'", node.Scalar());
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an undefined value";
  }
}

int lineOf(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : mark.line + 1;
}

std::optional<std::string_view> closestMatch(std::string_view word,
                                             std::span<const std::string_view> candidates) {
  // Allow roughly one typo per three characters, at least one, at most three.
  const size_t budget = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::optional<std::string_view> best;
  size_t best_distance = budget + 1;
  for (auto candidate : candidates) {
    size_t d = editDistance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (best || word.size() < 3) return best;
  // A word cut short or run on ("max_span" for "max_span_months").
  for (auto candidate : candidates) {
    if (candidate.starts_with(word) || word.starts_with(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string joinPath(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return fmt::format("{}.{}", parent, key);
}

void Walker::report(std::string path, int line, std::string message) {
  issues_.push_back(ConfigIssue{std::move(path), line, std::move(message)});
}

bool Walker::expectMap(const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) return true;
  report(path, node, fmt::format("must be a mapping (key: value), got {}", describe(node)));
  return false;
}

bool Walker::expectSequence(const YAML::Node& node, const std::string& path) {
  if (node.IsSequence()) return true;
  report(path, node, fmt::format("must be a list, got {}", describe(node)));
  return false;
}

std::optional<std::string> Walker::readString(const YAML::Node& value, const std::string& path,
                                              NullIs null_is, bool allow_empty) {
  if (value.IsNull()) {
    if (null_is == NullIs::kEmpty && allow_empty) return std::string();
    report(path, value, "missing value");
    return std::nullopt;
  }
  if (!value.IsScalar()) {
    report(path, value, fmt::format("must be a string, got {}", describe(value)));
    return std::nullopt;
  }
  std::string text = value.Scalar();
  if (text.empty() && !allow_empty) {
    report(path, value, "must not be empty");
    return std::nullopt;
  }
  return text;
}

std::optional<uint64_t> Walker::readUInt(const YAML::Node& value, const std::string& path,
                                         uint64_t min, uint64_t max, Quoted quoted) {
  if (!value.IsScalar() || (quoted == Quoted::kRefused && value.Tag() == "!")) {
    report(path, value, fmt::format("must be an integer in [{}, {}], got {}", min, max, describe(value)));
    return std::nullopt;
  }
  const std::string& text = value.Scalar();
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  const bool digits_only = !text.empty() && end == text.data() + text.size();
  if (ec == std::errc() && digits_only && number >= min && number <= max) return number;
  if ((ec == std::errc() || ec == std::errc::result_out_of_range) &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      !text.empty()) {
    report(path, value, fmt::format("{} is out of range [{}, {}]", text, min, max));
  } else {
    report(path, value,
           fmt::format("must be an integer in [{}, {}], got '{}'", min, max, text));
  }
  return std::nullopt;
}

std::optional<HostPort> Walker::readHostPort(const YAML::Node& value, const std::string& path) {
  auto text = readString(value, path, NullIs::kMissing, false);
  if (!text) return std::nullopt;
  auto parsed = parseHostPort(*text);
  if (!parsed) {
    report(path, value, parsed.error());
    return std::nullopt;
  }
  return *parsed;
}

std::optional<std::string> Walker::readChoice(const YAML::Node& value, const std::string& path,
                                              std::span<const std::string_view> choices) {
  auto text = readString(value, path, NullIs::kMissing, false);
  if (!text) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *text) != choices.end()) return text;
  std::string message = fmt::format("'{}' is not one of: {}", *text, joinWords(choices));
  if (auto close = closestMatch(*text, choices)) message += fmt::format(" (did you mean '{}'?)", *close);
  report(path, value, std::move(message));
  return std::nullopt;
}

std::vector<MapEntry> entries(Walker& walker, const YAML::Node& map, const std::string& path) {
  std::vector<MapEntry> out;
  for (const auto& entry : map) {
    // Copies: yaml-cpp's iterator yields a temporary; Node itself is a cheap handle.
    const YAML::Node key = entry.first;
    const YAML::Node value = entry.second;
    if (!key.IsScalar()) {
      walker.report(path, key, fmt::format("keys must be plain words, got {}", describe(key)));
      continue;
    }
    const std::string& name = key.Scalar();
    if (std::any_of(out.begin(), out.end(), [&](const MapEntry& e) { return e.name() == name; })) {
      walker.report(joinPath(path, name), key, fmt::format("duplicate key '{}'", name));
      continue;
    }
    out.push_back(MapEntry{MapEntry::kAnyKey, key, value});
  }
  return out;
}

std::vector<MapEntry> checkKeys(Walker& walker, const YAML::Node& map, const std::string& path,
                                std::span<const std::string_view> keys) {
  std::vector<MapEntry> accepted;
  for (MapEntry& e : entries(walker, map, path)) {
    const std::string& name = e.name();
    auto found = std::find(keys.begin(), keys.end(), name);
    if (found == keys.end()) {
      std::string message = fmt::format("unknown key '{}'", name);
      if (auto close = closestMatch(name, keys)) {
        message += fmt::format(" (did you mean '{}'?)", *close);
      } else {
        message += fmt::format(" (expected one of: {})", joinWords(keys));
      }
      walker.report(joinPath(path, name), e.key, std::move(message));
      continue;
    }
    e.field = static_cast<size_t>(found - keys.begin());
    accepted.push_back(std::move(e));
  }
  return accepted;
}

const MapEntry* findEntry(std::span<const MapEntry> entries, std::string_view key) {
  for (const auto& e : entries) {
    if (e.name() == key) return &e;
  }
  return nullptr;
}

void reportMissing(Walker& walker, const YAML::Node& map, const std::string& path,
                   std::string_view key) {
  walker.report(joinPath(path, key), map, fmt::format("missing required key '{}'", key));
}

void readBool(Walker& w, const YAML::Node& v, const std::string& p, bool& out) {
  static constexpr std::string_view kBools[] = {"true", "false"};
  if (auto word = w.readChoice(v, p, kBools)) out = *word == "true";
}

std::string resolvePath(const std::string& base_dir, const std::string& text) {
  if (text.empty()) return text;
  std::filesystem::path p(text);
  if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

}  // namespace sp::conf::detail
