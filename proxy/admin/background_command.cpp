#include "proxy/admin/background_command.hpp"

#include <fmt/format.h>

#include "conf/background_config.hpp"
#include "proxy/core/background_gate.hpp"
#include "proxy/core/command_cursor.hpp"

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
  CommandCursor c(sql);
  BackgroundCommand command;
  if (c.accept({"SHOW", "BACKGROUND"})) {
    if (!c.done()) return std::unexpected(std::string("usage: SHOW BACKGROUND"));
    return command;
  }
  if (!c.accept({"SET", "BACKGROUND"})) return std::nullopt;
  const std::string usage = "usage: SET BACKGROUND <key> = <n>, key one of " + keyList();
  auto name = c.name();
  if (!name || !c.accept(parser::TokenKind::kEquals)) return std::unexpected(usage);
  auto value = c.integer();
  if (!value || !c.done()) return std::unexpected(usage);
  const conf::BackgroundKey* key = backgroundKey(*name);
  if (key == nullptr) return std::unexpected("unknown key " + *name + "; " + usage);
  if (*value < key->min || *value > key->max) {
    return std::unexpected(fmt::format("background.{} takes {} to {}", key->name, key->min, key->max));
  }
  command.kind = BackgroundCommand::Kind::kSet;
  command.key = std::string(key->name);
  command.value = static_cast<uint32_t>(*value);
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
