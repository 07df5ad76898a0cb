// The data-lifecycle commands of the admin port (docs/admin.md, "Data
// lifecycle"): month partitions of tg_channel_message, the msg archive.
// Parsed apart from admin_command.cpp because they run asynchronously
// (they talk to every backend) while the other admin commands answer from
// the proxy's own state. Pure: no sockets, no logging.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "routing/map/month.hpp"

namespace sp::proxy {

enum class LifecycleCommandKind : uint8_t {
  kShowPartitions,    // SHOW PARTITIONS [OF <table>] [AS OF '<date>']
  kEnsurePartitions,  // ENSURE PARTITIONS AHEAD <n> [OF <table>] [AS OF '<date>']
  kArchiveOlderThan,  // ARCHIVE <table> OLDER THAN <n> DAYS [AS OF '<date>']
  kArchiveBefore,     // ARCHIVE <table> BEFORE '<date>' [EXPORT ONLY]
  kShowArchives,      // SHOW ARCHIVES
};

struct LifecycleCommand {
  LifecycleCommandKind kind = LifecycleCommandKind::kShowPartitions;
  std::string table;                          // empty: every table the command applies to
  uint32_t ahead = 0;                         // kEnsurePartitions
  uint32_t days = 0;                          // kArchiveOlderThan
  std::optional<routing::DateTimeValue> as_of;  // the "now" to use instead of the clock (UTC)
  std::optional<routing::DateTimeValue> before; // kArchiveBefore
  bool export_only = false;                   // kArchiveBefore on month tables: export and verify, no DROP
};

// nullopt: not a lifecycle command (the other admin commands apply);
// an error: a lifecycle command spelled wrongly (the message says the form).
std::optional<std::expected<LifecycleCommand, std::string>> parseLifecycleCommand(std::string_view sql);

// Lines for HELP.
std::vector<std::pair<std::string, std::string>> lifecycleCommandHelp();

}  // namespace sp::proxy
