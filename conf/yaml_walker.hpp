// Internal to conf/: walks a yaml-cpp document while collecting every problem
// (key path + line) instead of stopping at the first. The one YAML walker of
// the project: the proxy config (sections.cpp) and the shard-map file
// (shard_map_file.cpp) are read with it. Not part of the public API, which is
// why yaml-cpp stays out of config.hpp and shard_map_file.hpp.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config_issue.hpp"
#include "conf/host_port.hpp"

namespace sp::conf::detail {

// 1-based line of a node, 0 when yaml-cpp has no position for it.
int lineOf(const YAML::Node& node);
// What a node is, for "got ..." messages: "a list", "a mapping", "nothing",
// "a quoted string", or a plain scalar itself in quotes ('abc').
std::string describe(const YAML::Node& node);

// Closest candidate within a small edit distance, for "did you mean" hints.
std::optional<std::string_view> closestMatch(std::string_view word,
                                             std::span<const std::string_view> candidates);

// Optional value kinds: a YAML null (`key:` or `key: ~`) means "not set".
enum class NullIs { kMissing, kEmpty };
// Whether an integer may be written as a quoted string ("16").
enum class Quoted { kAccepted, kRefused };

class Walker {
 public:
  explicit Walker(ConfigIssues& issues) : issues_(issues) {}

  void report(std::string path, int line, std::string message);
  void report(std::string path, const YAML::Node& at, std::string message) {
    report(std::move(path), lineOf(at), std::move(message));
  }

  // Any scalar as text. Null is either an empty string or a "missing value" issue.
  std::optional<std::string> readString(const YAML::Node& value, const std::string& path,
                                        NullIs null_is, bool allow_empty);
  // A decimal integer within [min, max].
  std::optional<uint64_t> readUInt(const YAML::Node& value, const std::string& path,
                                   uint64_t min, uint64_t max, Quoted quoted = Quoted::kAccepted);
  std::optional<HostPort> readHostPort(const YAML::Node& value, const std::string& path);
  // One of a fixed set of words (with a "did you mean" when close).
  std::optional<std::string> readChoice(const YAML::Node& value, const std::string& path,
                                        std::span<const std::string_view> choices);

  bool expectMap(const YAML::Node& node, const std::string& path);
  bool expectSequence(const YAML::Node& node, const std::string& path);

  size_t issueCount() const { return issues_.size(); }

 private:
  ConfigIssues& issues_;
};

// One accepted key of a mapping and how to read its value into T.
template <class T>
struct FieldSpec {
  std::string_view key;
  bool required;
  void (*read)(Walker& walker, const YAML::Node& value, const std::string& path, T& out);
};

// `true` / `false` into `out` (left alone when reported).
void readBool(Walker& walker, const YAML::Node& value, const std::string& path, bool& out);
// `text` made absolute against `base_dir` (empty stays empty).
std::string resolvePath(const std::string& base_dir, const std::string& text);

std::string joinPath(const std::string& parent, std::string_view key);

// One entry of a mapping whose key is a scalar.
struct MapEntry {
  static constexpr size_t kAnyKey = static_cast<size_t>(-1);
  size_t field;  // index into the accepted keys (checkKeys), kAnyKey from entries()
  YAML::Node key;
  YAML::Node value;
  const std::string& name() const { return key.Scalar(); }
};
// Every entry of a mapping whose keys are names chosen by the user (tables,
// shards): reports keys that are not scalars and duplicates, skipping them.
std::vector<MapEntry> entries(Walker& walker, const YAML::Node& map, const std::string& path);
// The same against a fixed set of keys: unknown keys are reported too (with a
// "did you mean" hint when one is close) and skipped; `field` says which key.
std::vector<MapEntry> checkKeys(Walker& walker, const YAML::Node& map, const std::string& path,
                                std::span<const std::string_view> keys);
const MapEntry* findEntry(std::span<const MapEntry> entries, std::string_view key);
void reportMissing(Walker& walker, const YAML::Node& map, const std::string& path,
                   std::string_view key);

// Reads a mapping against a field table: every entry is checked, every problem reported.
template <class T>
void readMapping(Walker& walker, const YAML::Node& map, const std::string& path,
                 std::span<const FieldSpec<T>> fields, T& out) {
  if (!walker.expectMap(map, path)) return;
  std::vector<std::string_view> keys;
  keys.reserve(fields.size());
  for (const auto& f : fields) keys.push_back(f.key);
  std::vector<bool> seen(fields.size(), false);
  for (const MapEntry& e : checkKeys(walker, map, path, keys)) {
    seen[e.field] = true;
    fields[e.field].read(walker, e.value, joinPath(path, fields[e.field].key), out);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].required && !seen[i]) reportMissing(walker, map, path, fields[i].key);
  }
}

}  // namespace sp::conf::detail
