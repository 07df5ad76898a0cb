#include "proxy/changes/changes_command.hpp"

#include <fmt/format.h>

#include "proxy/changes/changes_request.hpp"
#include "proxy/core/command_cursor.hpp"

namespace sp::proxy::changes {

namespace {

constexpr std::string_view kUsage =
    "shardproxy admin: expected SHOW CHANGES [FOR <table>[, <table>...]] [FROM '<position>'] [LIMIT n] [WAIT ms]";

std::expected<uint64_t, std::string> bounded(CommandCursor& c, std::string_view what, uint64_t max) {
  auto n = c.integer();
  if (!n || *n == 0 || *n > max) return std::unexpected(fmt::format("shardproxy admin: {} must be 1..{}", what, max));
  return *n;
}

}  // namespace

std::optional<std::expected<ChangesRead, std::string>> parseChangesCommand(std::string_view sql) {
  CommandCursor c(sql);
  if (!c.accept({"show", "changes"})) return std::nullopt;
  using R = std::expected<ChangesRead, std::string>;
  if (c.hasError()) return R(std::unexpected(std::string(kUsage)));
  ChangesRead read;
  if (c.accept({"for"})) {
    do {
      auto name = c.name();
      if (!name) return R(std::unexpected(std::string(kUsage)));
      auto checked = parseTableList(*name);
      if (!checked) return R(std::unexpected("shardproxy admin: " + checked.error()));
      read.request.tables.push_back(std::move(*name));
    } while (c.accept(parser::TokenKind::kComma));
  }
  if (c.accept({"from"})) {
    auto text = c.string();
    if (!text) return R(std::unexpected(std::string(kUsage)));
    auto position = parsePosition(*text);
    if (!position) return R(std::unexpected("shardproxy admin: bad position: " + position.error()));
    read.request.from = std::move(*position);
  }
  if (c.accept({"limit"})) {
    auto n = bounded(c, "LIMIT", kMaxReadLimit);
    if (!n) return R(std::unexpected(n.error()));
    read.limit = *n;
  }
  if (c.accept({"wait"})) {
    auto n = bounded(c, "WAIT", kMaxReadWaitMs);
    if (!n) return R(std::unexpected(n.error()));
    read.wait_ms = *n;
  }
  if (!c.done()) return R(std::unexpected(std::string(kUsage)));
  return R(std::move(read));
}

std::vector<std::pair<std::string, std::string>> changesCommandHelp() {
  return {{"SHOW CHANGES [FOR <table>, ...] [FROM '<position>'] [LIMIT <n>] [WAIT <ms>]",
           "the row changes of logical tables after a position (the change stream, docs/changes.md); the last row "
           "is the position to read from next"}};
}

}  // namespace sp::proxy::changes
