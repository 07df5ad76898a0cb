// The smallest valid config, for conf tests of one section: `extra` is
// appended after its three lines (users, backends), so the section's first
// line is line 5 of the text.
#pragma once
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "conf/config.hpp"

namespace sp::conf::fixture {

inline constexpr const char* kBase = "/etc/shardproxy";

inline std::string minimalWith(std::string_view extra) {
  return std::string("users:\n  - {name: app, password: pw}\n"
                     "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n") +
         std::string(extra);
}

// `section` with one bad line (its line 6) is refused, naming `path` and the line.
inline void expectRefusedAtLine6(const std::string& section, std::string_view bad, std::string_view path) {
  auto config = parseConfig(minimalWith(section + ":\n" + std::string(bad)), kBase);
  ASSERT_FALSE(config) << bad;
  const std::string text = formatIssues(config.error(), "t.yaml");
  EXPECT_NE(text.find(path), std::string::npos) << text;
  EXPECT_NE(text.find("t.yaml:6"), std::string::npos) << text;
}

}  // namespace sp::conf::fixture
