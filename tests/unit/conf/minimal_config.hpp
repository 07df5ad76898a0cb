// The smallest valid config, for conf tests of one section: `extra` is
// appended after its three lines (users, backends), so the section's first
// line is line 5 of the text.
#pragma once
#include <string>
#include <string_view>

namespace sp::conf::fixture {

inline constexpr const char* kBase = "/etc/shardproxy";

inline std::string minimalWith(std::string_view extra) {
  return std::string("users:\n  - {name: app, password: pw}\n"
                     "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n") +
         std::string(extra);
}

}  // namespace sp::conf::fixture
