// The admin port's commands of background work (docs/admin.md, "Background
// work"):
//   SHOW BACKGROUND                      the thresholds in force, and per
//                                        backend whether background work
//                                        waits now, why, and its pauses
//   SET BACKGROUND <key> = <n>           a threshold at run time (the
//                                        config's keys and ranges)
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/core/admin_reply.hpp"

namespace sp::proxy {

class BackgroundGate;

struct BackgroundCommand {
  enum class Kind : uint8_t { kShow, kSet };
  Kind kind = Kind::kShow;
  std::string key;     // kSet
  uint32_t value = 0;  // kSet, within the key's range
};

// nullopt: not a background command; an error: one, malformed (usage or range).
std::optional<std::expected<BackgroundCommand, std::string>> parseBackgroundCommand(std::string_view sql);

AdminReply runBackgroundCommand(BackgroundGate& gate, const BackgroundCommand& command);

std::vector<std::pair<std::string, std::string>> backgroundCommandHelp();

}  // namespace sp::proxy
