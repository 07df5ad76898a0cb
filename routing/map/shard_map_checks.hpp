// Internal to routing/: what the shard-map compiler checks values with (names,
// range lists) and where it collects problems. The file itself is read in
// conf/ (conf/shard_map_file.hpp); nothing here knows YAML.
#pragma once
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "routing/map/shard_map.hpp"

namespace sp::routing::detail {

class IssueSink {
 public:
  explicit IssueSink(ShardMapIssues& issues) : issues_(issues) {}
  void add(std::string path, int line, std::string message) {
    issues_.push_back({std::move(path), line, std::move(message)});
  }

 private:
  ShardMapIssues& issues_;
};

// "tables" + "msg" -> "tables.msg" (the key paths of issues).
std::string joinPath(const std::string& parent, std::string_view key);
// An SQL identifier usable unquoted: [A-Za-z0-9_$], not all digits, at most 64 bytes.
bool isIdentifier(std::string_view s);
// "0-15", "0-7,12,14-15": inclusive ranges, each value <= max_value.
std::expected<std::vector<BucketRange>, std::string> parseRanges(std::string_view text, uint64_t max_value);
// Renders a sorted list of numbers as "3-5,9".
std::string compressNumbers(std::span<const uint32_t> sorted_numbers);

}  // namespace sp::routing::detail
