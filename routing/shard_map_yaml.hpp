// Internal to routing/: helpers that walk a yaml-cpp document while collecting
// every problem (key path + line) instead of stopping at the first one.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "routing/shard_map.hpp"

namespace sp::routing::detail {

class IssueSink {
 public:
  explicit IssueSink(ShardMapIssues& issues) : issues_(issues) {}
  void add(std::string path, int line, std::string message) {
    issues_.push_back({std::move(path), line, std::move(message)});
  }
  void add(std::string path, const YAML::Node& at, std::string message);
  size_t count() const { return issues_.size(); }

 private:
  ShardMapIssues& issues_;
};

// 1-based line of a node, 0 when yaml-cpp has no position for it.
int lineOf(const YAML::Node& node);
std::string joinPath(const std::string& parent, std::string_view key);

// One entry of a YAML mapping whose key is a scalar.
struct MapEntry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};
// Entries of a mapping; reports non-scalar and duplicate keys (skipping them).
std::vector<MapEntry> mapEntries(IssueSink& sink, const YAML::Node& map, const std::string& path);
// Reports keys not in `allowed`, with a "did you mean" hint when one is close.
void reportUnknownKeys(IssueSink& sink, std::span<const MapEntry> entries, const std::string& path,
                       std::span<const std::string_view> allowed);
const MapEntry* findEntry(std::span<const MapEntry> entries, std::string_view key);

// Readers report a problem and return nullopt on a wrong type or value.
bool expectMap(IssueSink& sink, const YAML::Node& node, const std::string& path);
// A plain (unquoted) decimal integer within [min, max].
std::optional<uint64_t> readUInt(IssueSink& sink, const YAML::Node& node, const std::string& path,
                                 uint64_t min, uint64_t max);
// Any scalar as text (null and collections are wrong types).
std::optional<std::string> readString(IssueSink& sink, const YAML::Node& node, const std::string& path);
// An SQL identifier usable unquoted: [A-Za-z0-9_$], not all digits, at most 64 bytes.
std::optional<std::string> readIdentifier(IssueSink& sink, const YAML::Node& node, const std::string& path);
std::optional<std::string> readChoice(IssueSink& sink, const YAML::Node& node, const std::string& path,
                                      std::span<const std::string_view> choices);

bool isIdentifier(std::string_view s);
// "0-15", "0-7,12,14-15": inclusive ranges, each value <= max_value.
std::expected<std::vector<BucketRange>, std::string> parseRanges(std::string_view text, uint64_t max_value);
// Renders a sorted list of numbers as "3-5,9".
std::string compressNumbers(std::span<const uint32_t> sorted_numbers);
size_t editDistance(std::string_view a, std::string_view b);

}  // namespace sp::routing::detail
