// The admin port's change stream (docs/admin.md, "Change stream"):
//   SHOW CHANGES [FOR <table>[, <table>...]] [FROM '<position>'] [LIMIT n] [WAIT ms]
// reads the row changes after the position (from now without FROM): whole
// transactions, until LIMIT row changes (default 100, at most 10000), until
// every backend's reader is at the end of its binary log, or WAIT ms
// (default 2000, at most 60000). Pure parsing; ChangeService::read runs it.
#pragma once
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/changes/change_service.hpp"

namespace sp::proxy::changes {

inline constexpr uint64_t kMaxReadLimit = 10'000;
inline constexpr uint64_t kMaxReadWaitMs = 60'000;

// nullopt: not this command.
std::optional<std::expected<ChangesRead, std::string>> parseChangesCommand(std::string_view sql);

std::vector<std::pair<std::string, std::string>> changesCommandHelp();

}  // namespace sp::proxy::changes
