#include "proxy/session/idle_timeout.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>

namespace sp::proxy {

namespace {

bool sameSettingWord(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trimmed(std::string_view v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  return v;
}

// An unsigned decimal integer, clamped into MariaDB's range as SET clamps
// it (with a warning: "Truncated incorrect wait_timeout value").
std::optional<uint32_t> clampedSeconds(std::string_view text) {
  text = trimmed(text);
  if (!text.empty() && text.front() == '-') return IdleTimeout::kMin;  // negative: the minimum, as the server does
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc::result_out_of_range) return IdleTimeout::kMax;
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return static_cast<uint32_t>(std::clamp<uint64_t>(n, IdleTimeout::kMin, IdleTimeout::kMax));
}

bool isWaitTimeout(std::string_view name) { return sameSettingWord(name, "wait_timeout"); }

// `SET wait_timeout = DEFAULT` and `= @@global.wait_timeout`: the global,
// which for the proxy's sessions is server.wait_timeout_s (the backend
// would report its own).
bool meansGlobal(std::string_view value) {
  value = trimmed(value);
  return sameSettingWord(value, "DEFAULT") || sameSettingWord(value, "@@global.wait_timeout");
}

}  // namespace

void IdleTimeout::onLogin(const conf::ServerConfig& server, bool interactive) {
  seconds_ = interactive ? server.interactive_timeout_s : server.wait_timeout_s;
}

void IdleTimeout::onReset(const conf::ServerConfig& server) { seconds_ = server.wait_timeout_s; }

void IdleTimeout::onStatement(std::span<const parser::SessionSetting> settings,
                              const protocol::SessionChanges& changes, bool tracked,
                              const conf::ServerConfig& server) {
  // The statement's last assignment to wait_timeout decides (SET a = 1, a = 2).
  const parser::SessionSetting* last = nullptr;
  for (const auto& s : settings) {
    if (s.kind == parser::SessionSetting::Kind::kSystemVariable && isWaitTimeout(s.name)) last = &s;
  }
  if (tracked) {
    // The server's report is the value in force, clamped, whatever
    // expression or procedure set it.
    std::optional<uint32_t> reported;
    for (const auto& v : changes.variables) {
      if (isWaitTimeout(v.name)) reported = clampedSeconds(v.value);
    }
    if (reported) {
      seconds_ = last && meansGlobal(last->value) ? server.wait_timeout_s : *reported;
      return;
    }
    // MariaDB 10.11 does not report every assignment (`SET @@wait_timeout = 2`
    // comes back without it, as `SET @@autocommit = FALSE` does): as written.
  }
  if (!last) return;
  if (meansGlobal(last->value)) {
    seconds_ = server.wait_timeout_s;
  } else if (auto literal = clampedSeconds(last->value)) {
    seconds_ = *literal;
  }
}

}  // namespace sp::proxy
