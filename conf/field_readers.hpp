// Internal to conf/: readers and ranges shared by the section files
// (sections.cpp, user_fields.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "conf/yaml_walker.hpp"

namespace sp::conf::detail {

inline constexpr uint64_t kMaxClientConnections = 1'000'000;
inline constexpr uint64_t kMaxPoolConnections = 100'000;
// backends[].max_active_statements and a replica's own (0: no budget).
inline constexpr uint64_t kMaxActiveStatements = 100'000;

template <class Target>
void assign(std::optional<uint64_t> value, Target& target) {
  if (value) target = static_cast<Target>(*value);
}

inline void readStringInto(Walker& w, const YAML::Node& v, const std::string& path, std::string& out,
                    NullIs null_is, bool allow_empty) {
  if (auto s = w.readString(v, path, null_is, allow_empty)) out = std::move(*s);
}

// Backend and user names appear in shard maps and logs: keep them to one plain word.
inline void readName(Walker& w, const YAML::Node& v, const std::string& path, std::string& out) {
  auto name = w.readString(v, path, NullIs::kMissing, false);
  if (!name) return;
  for (char c : *name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) {
      w.report(path, v, fmt::format("'{}' may only contain letters, digits, '_', '-' and '.'", *name));
      return;
    }
  }
  out = std::move(*name);
}

}  // namespace sp::conf::detail
