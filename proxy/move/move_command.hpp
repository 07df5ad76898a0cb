// The online-move commands of the admin port (docs/admin.md, "Online
// moves"): MOVE BUCKET / KEY / SHARD, SHOW MOVES, CANCEL MOVE, CLEANUP MOVE.
// Parsed apart from admin_command.cpp like the lifecycle commands: they run
// against the move coordinator (proxy/move/move_coordinator.hpp). Pure.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "routing/map/move_plan.hpp"

namespace sp::proxy {

enum class MoveCommandKind : uint8_t {
  kMove,     // MOVE BUCKET 17[,18..] OF t TO s03 | MOVE KEY 42 OF t TO s03 | MOVE SHARD 5 OF t TO db1
  kShow,     // SHOW MOVES
  kCancel,   // CANCEL MOVE <id>
  kCleanup,  // CLEANUP MOVE <id>
};

struct MoveCommand {
  MoveCommandKind kind = MoveCommandKind::kShow;
  routing::MoveRequest request;  // kMove
  int64_t id = 0;                // kCancel, kCleanup
};

// nullopt: not a move command; an error: a move command spelled wrongly.
std::optional<std::expected<MoveCommand, std::string>> parseMoveCommand(std::string_view sql);

// Lines for HELP.
std::vector<std::pair<std::string, std::string>> moveCommandHelp();

}  // namespace sp::proxy
