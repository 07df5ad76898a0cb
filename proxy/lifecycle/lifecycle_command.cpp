#include "proxy/lifecycle/lifecycle_command.hpp"

#include <charconv>

#include "proxy/core/command_cursor.hpp"
#include "routing/conditions.hpp"

namespace sp::proxy {

namespace {

using Parsed = std::expected<LifecycleCommand, std::string>;

Parsed malformed(std::string_view form) {
  return std::unexpected("shardproxy admin: expected " + std::string(form));
}

// '<date>' or '<date time>' (UTC).
std::optional<routing::DateTimeValue> dateLiteral(CommandCursor& c) {
  auto text = c.string();
  if (!text) return std::nullopt;
  return routing::parseDateTime(*text);
}

// The optional tail [OF <table>] [AS OF '<date>'].
bool readTail(CommandCursor& c, LifecycleCommand& cmd, bool allow_table) {
  if (allow_table && c.accept({"of"})) {
    auto table = c.name();
    if (!table) return false;
    cmd.table = *table;
  }
  if (c.accept({"as", "of"})) {
    cmd.as_of = dateLiteral(c);
    if (!cmd.as_of) return false;
  }
  return c.done();
}

constexpr std::string_view kShowForm = "SHOW PARTITIONS [OF <table>] [AS OF 'YYYY-MM-DD']";
constexpr std::string_view kEnsureForm = "ENSURE PARTITIONS AHEAD <n> [OF <table>] [AS OF 'YYYY-MM-DD'] (n = 0..120)";
constexpr std::string_view kArchiveForm =
    "ARCHIVE <table> OLDER THAN <n> DAYS [AS OF 'YYYY-MM-DD'] or ARCHIVE <table> BEFORE 'YYYY-MM-DD' [EXPORT ONLY]";

Parsed parseArchive(CommandCursor& c) {
  LifecycleCommand cmd;
  auto table = c.name();
  if (!table) return malformed(kArchiveForm);
  cmd.table = *table;
  if (c.accept({"older", "than"})) {
    auto days = c.integer();
    if (!days || *days == 0 || *days > 36500 || !(c.accept({"days"}) || c.accept({"day"}))) {
      return malformed(kArchiveForm);
    }
    cmd.kind = LifecycleCommandKind::kArchiveOlderThan;
    cmd.days = static_cast<uint32_t>(*days);
    if (!readTail(c, cmd, false)) return malformed(kArchiveForm);
    return cmd;
  }
  if (c.accept({"before"})) {
    cmd.kind = LifecycleCommandKind::kArchiveBefore;
    cmd.before = dateLiteral(c);
    cmd.export_only = c.accept({"export", "only"});
    if (!cmd.before || !c.done()) return malformed(kArchiveForm);
    return cmd;
  }
  return malformed(kArchiveForm);
}

}  // namespace

std::optional<std::expected<LifecycleCommand, std::string>> parseLifecycleCommand(std::string_view sql) {
  CommandCursor c(sql);
  if (c.hasError()) return std::nullopt;  // the admin parser reports where
  LifecycleCommand cmd;
  if (c.accept({"show", "partitions"})) {
    cmd.kind = LifecycleCommandKind::kShowPartitions;
    if (!readTail(c, cmd, true)) return malformed(kShowForm);
    return cmd;
  }
  if (c.accept({"ensure", "partitions"})) {
    cmd.kind = LifecycleCommandKind::kEnsurePartitions;
    if (!c.accept({"ahead"})) return malformed(kEnsureForm);
    auto n = c.integer();
    if (!n || *n > 120) return malformed(kEnsureForm);
    cmd.ahead = static_cast<uint32_t>(*n);
    if (!readTail(c, cmd, true)) return malformed(kEnsureForm);
    return cmd;
  }
  if (c.accept({"show", "archives"})) {
    cmd.kind = LifecycleCommandKind::kShowArchives;
    if (!c.done()) return malformed("SHOW ARCHIVES");
    return cmd;
  }
  if (c.accept({"archive"})) return parseArchive(c);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> lifecycleCommandHelp() {
  return {
      {std::string(kShowForm), "per shard and month partition: rows, data and index bytes; missing future months; "
                               "rows in pmax"},
      {std::string(kEnsureForm), "REORGANIZE pmax on every shard so the next n months have partitions (idempotent)"},
      {"ARCHIVE msg OLDER THAN <n> DAYS", "move old rows of msg_NN into msg_archive_NN in batches (resumable)"},
      {"ARCHIVE tg_channel_message BEFORE 'YYYY-MM-01' [EXPORT ONLY]",
       "export, verify and drop the month partitions before the date"},
      {"SHOW ARCHIVES", "archive runs and their progress"},
  };
}

}  // namespace sp::proxy
