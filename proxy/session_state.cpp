#include "proxy/session_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace sp::proxy {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Quoted or unquoted charset names compare equal ('utf8mb4' == utf8mb4).
std::string canonicalCharset(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\'' || c == '"' || c == '`') continue;
    out += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

struct CollationName {
  uint8_t id;
  const char* names;
};

// Common collation ids sent in handshakes by real clients.
constexpr CollationName kCollations[] = {
    {8, "latin1"},
    {33, "utf8"},
    {45, "utf8mb4"},
    {46, "utf8mb4 collate utf8mb4_bin"},
    {47, "latin1 collate latin1_bin"},
    {63, "binary"},
    {83, "utf8 collate utf8_bin"},
    {192, "utf8 collate utf8_unicode_ci"},
    {224, "utf8mb4 collate utf8mb4_unicode_ci"},
    {28, "gbk"},
    {24, "gb2312"},
    {11, "ascii"},
};

}  // namespace

bool SessionState::apply(const parser::SessionSetting& s) {
  using Kind = parser::SessionSetting::Kind;
  switch (s.kind) {
    case Kind::kSystemVariable:
      variables[lower(s.name)] = s.value;
      return true;
    case Kind::kNames:
      names = canonicalCharset(s.value);
      // SET NAMES also resets what SET CHARACTER SET changed.
      character_set.clear();
      return true;
    case Kind::kCharacterSet:
      character_set = canonicalCharset(s.value);
      return true;
    case Kind::kSessionIsolation:
      isolation = s.value;
      return true;
    case Kind::kGlobalVariable:
    case Kind::kUserVariable:
    case Kind::kNextTransaction:
      return false;
  }
  return false;
}

std::vector<std::string> syncStatements(const SessionState& desired, const SessionState& applied) {
  std::vector<std::string> out;
  if (!desired.names.empty() && desired.names != applied.names) {
    out.push_back("SET NAMES " + desired.names);
  }
  if (desired.character_set != applied.character_set) {
    // Empty desired means "as SET NAMES left it": re-issue SET NAMES.
    if (desired.character_set.empty()) {
      if (!desired.names.empty() && out.empty()) out.push_back("SET NAMES " + desired.names);
    } else {
      out.push_back("SET CHARACTER SET " + desired.character_set);
    }
  }
  std::string assignments;
  auto add = [&](const std::string& name, const std::string& value) {
    assignments += assignments.empty() ? "SET " : ", ";
    assignments += fmt::format("@@session.{} = {}", name, value);
  };
  for (const auto& [name, value] : desired.variables) {
    auto it = applied.variables.find(name);
    if (it == applied.variables.end() || it->second != value) add(name, value);
  }
  for (const auto& [name, value] : applied.variables) {
    if (!desired.variables.contains(name)) add(name, "DEFAULT");
  }
  if (!assignments.empty()) out.push_back(std::move(assignments));
  if (desired.isolation != applied.isolation) {
    out.push_back(desired.isolation.empty()
                      ? std::string("SET @@session.tx_isolation = DEFAULT, @@session.tx_read_only = DEFAULT")
                      : "SET SESSION TRANSACTION " + desired.isolation);
  }
  return out;
}

std::string namesForCollation(uint8_t collation_id) {
  for (const auto& c : kCollations) {
    if (c.id == collation_id) return c.names;
  }
  return "utf8mb4";
}

}  // namespace sp::proxy
