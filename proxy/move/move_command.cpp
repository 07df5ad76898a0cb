#include "proxy/move/move_command.hpp"

#include <limits>

#include "proxy/core/command_cursor.hpp"

namespace sp::proxy {

namespace {

using Parsed = std::expected<MoveCommand, std::string>;
constexpr uint64_t kMaxBucket = std::numeric_limits<uint32_t>::max();

Parsed malformed(std::string_view form) { return std::unexpected("shardproxy admin: expected " + std::string(form)); }

constexpr std::string_view kMoveForms =
    "MOVE BUCKET <n>[,<n>..] OF <table> TO <shard>, MOVE KEY <key> OF <table> TO <shard> or "
    "MOVE SHARD <n> OF <table> TO <backend>";

// "OF <table> TO <name>" and the end.
bool readTail(CommandCursor& c, routing::MoveRequest& r) {
  if (!c.accept({"of"})) return false;
  auto table = c.name();
  if (!table || !c.accept({"to"})) return false;
  auto target = c.name();
  if (!target) return false;
  r.table = *table;
  r.target = *target;
  return c.done();
}

Parsed parseMove(CommandCursor& c) {
  MoveCommand cmd;
  cmd.kind = MoveCommandKind::kMove;
  auto& r = cmd.request;
  if (c.accept({"bucket"}) || c.accept({"buckets"})) {
    r.kind = routing::MoveKind::kBuckets;
    do {
      auto b = c.integer();
      if (!b || *b > kMaxBucket) return malformed(kMoveForms);
      r.buckets.push_back(static_cast<uint32_t>(*b));
    } while (c.accept(parser::TokenKind::kComma));
  } else if (c.accept({"key"})) {
    r.kind = routing::MoveKind::kKey;
    auto k = c.integer();
    if (!k) return malformed(std::string(kMoveForms) + " (the key is an unsigned 64-bit integer)");
    r.key = *k;
  } else if (c.accept({"shard"})) {
    r.kind = routing::MoveKind::kShard;
    auto s = c.integer();
    if (!s || *s > kMaxBucket) return malformed(kMoveForms);
    r.shard = static_cast<uint32_t>(*s);
  } else {
    return malformed(kMoveForms);
  }
  if (!readTail(c, r)) return malformed(kMoveForms);
  return cmd;
}

Parsed parseId(CommandCursor& c, MoveCommandKind kind, std::string_view form) {
  MoveCommand cmd;
  cmd.kind = kind;
  auto id = c.integer();
  if (!id || *id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || !c.done()) return malformed(form);
  cmd.id = static_cast<int64_t>(*id);
  return cmd;
}

}  // namespace

std::optional<Parsed> parseMoveCommand(std::string_view sql) {
  CommandCursor c(sql);
  if (c.hasError()) return std::nullopt;
  if (c.accept({"move"})) return parseMove(c);
  if (c.accept({"show", "moves"})) {
    if (!c.done()) return malformed("SHOW MOVES");
    return MoveCommand{MoveCommandKind::kShow, {}, 0};
  }
  if (c.accept({"cancel", "move"})) return parseId(c, MoveCommandKind::kCancel, "CANCEL MOVE <id> (an id from SHOW MOVES)");
  if (c.accept({"cleanup", "move"})) {
    return parseId(c, MoveCommandKind::kCleanup, "CLEANUP MOVE <id> (an id from SHOW MOVES)");
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> moveCommandHelp() {
  return {
      {"MOVE BUCKET <n>[,<n>..] OF <table> TO <shard>",
       "move buckets of a bucket table to another shard online: copy, catch up, verify, switch the map"},
      {"MOVE KEY <key> OF <table> TO <shard>", "move one key (a hot channel) to a shard of its own (hot_keys)"},
      {"MOVE SHARD <n> OF <table> TO <backend>", "move one physical table of a mod table to another backend"},
      {"SHOW MOVES", "every move: state, rows copied, catch-up lag, verify result, write pause"},
      {"CANCEL MOVE <id>", "stop a move before its switch; routing stays on the source"},
      {"CLEANUP MOVE <id>", "delete the moved rows from the source after a verified switch"},
  };
}

}  // namespace sp::proxy
