#include "proxy/admin/background_command.hpp"

#include <fmt/format.h>

#include <charconv>

#include "conf/background_config.hpp"
#include "parser/lexer.hpp"
#include "proxy/core/background_gate.hpp"

namespace sp::proxy {

namespace {

const conf::BackgroundKey* backgroundKey(std::string_view name) {
  for (const auto& k : conf::kBackgroundKeys) {
    if (k.name.size() == name.size() &&
        std::equal(name.begin(), name.end(), k.name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        })) {
      return &k;
    }
  }
  return nullptr;
}

std::string keyList() {
  std::string out;
  for (const auto& k : conf::kBackgroundKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

}  // namespace

std::optional<std::expected<BackgroundCommand, std::string>> parseBackgroundCommand(std::string_view sql) {
  std::vector<parser::Token> tokens = parser::tokenize(sql);
  while (tokens.size() > 1 && tokens[tokens.size() - 2].is(parser::TokenKind::kSemicolon)) {
    tokens.erase(tokens.end() - 2);
  }
  auto word = [&](size_t i, std::string_view w) { return i < tokens.size() && parser::tokenIsWord(tokens[i], sql, w); };
  const size_t count = tokens.size() - 1;  // without kEnd
  BackgroundCommand command;
  if (word(0, "SHOW") && word(1, "BACKGROUND")) {
    if (count != 2) return std::unexpected(std::string("usage: SHOW BACKGROUND"));
    return command;
  }
  if (!(word(0, "SET") && word(1, "BACKGROUND"))) return std::nullopt;
  const std::string usage = "usage: SET BACKGROUND <key> = <n>, key one of " + keyList();
  if (count != 5 || !tokens[2].is(parser::TokenKind::kIdentifier) || !tokens[3].is(parser::TokenKind::kEquals) ||
      !tokens[4].is(parser::TokenKind::kInteger)) {
    return std::unexpected(usage);
  }
  const conf::BackgroundKey* key = backgroundKey(tokens[2].text(sql));
  if (key == nullptr) return std::unexpected("unknown key " + std::string(tokens[2].text(sql)) + "; " + usage);
  std::string_view digits = tokens[4].text(sql);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size() || value < key->min || value > key->max) {
    return std::unexpected(fmt::format("background.{} takes {} to {}", key->name, key->min, key->max));
  }
  command.kind = BackgroundCommand::Kind::kSet;
  command.key = std::string(key->name);
  command.value = static_cast<uint32_t>(value);
  return command;
}

AdminReply runBackgroundCommand(BackgroundGate& gate, const BackgroundCommand& command) {
  conf::BackgroundConfig settings = gate.settings();
  if (command.kind == BackgroundCommand::Kind::kSet) {
    settings.*(backgroundKey(command.key)->member) = command.value;
    gate.configure(settings);
    return AdminOk{};
  }
  LocalResult out;
  out.columns = {"backend", "waits_now", "reason", "pauses", "paused_ms", "forced", "last_paused"};
  // The thresholds first, one row each, so that one command shows what decides.
  for (const auto& k : conf::kBackgroundKeys) {
    out.rows.push_back({"(setting)", "", fmt::format("background.{} = {}", k.name, settings.*k.member), "", "", "", ""});
  }
  for (const auto& f : gate.figures()) {
    out.rows.push_back({f.backend, f.reason.empty() ? "no" : "yes", f.reason, std::to_string(f.pauses),
                        std::to_string(f.paused_ms), std::to_string(f.forced), f.last_paused});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> backgroundCommandHelp() {
  return {
      {"SHOW BACKGROUND", "whether moves, archiving, partition upkeep and schema changes wait on each backend now, why, "
                          "and their pauses; the thresholds in force"},
      {"SET BACKGROUND <key> = <n>", "a background.* threshold at run time (" + keyList() + ")"},
  };
}

}  // namespace sp::proxy
