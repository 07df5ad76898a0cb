// The admin port's command language (docs/admin.md), parsed with the SQL
// lexer so case, comments, spacing and a trailing ';' behave as in SQL.
// Pure: no sockets, no logging; the admin session executes what this returns.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace sp::proxy {

enum class AdminCommandKind : uint8_t {
  kShowShardMap,         // SHOW SHARD MAP
  kShowShardMapHistory,  // SHOW SHARD MAP HISTORY
  kShowShardMapErrors,   // SHOW SHARD MAP ERRORS: problems of the last refused reload
  kReloadShardMap,       // RELOAD SHARD MAP
  kRollbackShardMap,     // ROLLBACK SHARD MAP TO <version>
  kShowFleet,            // SHOW FLEET: the proxies of the fleet (etcd), the map each serves
  kShowBackends,         // SHOW BACKENDS
  kShowSessions,         // SHOW SESSIONS
  kShowOverload,         // SHOW OVERLOAD: every server's concurrency budget, queue and refusals
  kShowTransactions,     // SHOW TRANSACTIONS: open and in-doubt global transactions (transactions_command.hpp)
  kShowHotKeys,          // SHOW HOT KEYS [LIMIT n]: the busiest shard-key values (hot_key_tracker.hpp)
  kShowRoute,            // SHOW ROUTE <statement>
  kShowDigests,          // SHOW DIGESTS [LIMIT n] (also SHOW QUERY DIGEST [LIMIT n])
  kResetDigests,         // RESET DIGESTS (also RESET QUERY DIGEST)
  kShowStats,            // SHOW STATS: the metrics endpoint's series, one row each (no histogram buckets)
  kShowSchemaDrift,      // SHOW SCHEMA DRIFT: physical tables that differ from their logical table's first one
  kHelp,                 // HELP
  kSelectVariables,      // SELECT @@x[, ...] [LIMIT n], DATABASE(), USER(): client start-up probes
  kIgnoredSet,           // SET ... (drivers send SET NAMES / autocommit at connect): answered OK
  kUse,                  // USE db: accepted, nothing to switch
  kEmpty,                // only comments / ';'
};

// One item of a client probe (`SELECT @@version_comment LIMIT 1`).
struct SelectItem {
  std::string label;   // the column name the client sees (the item's text)
  std::string name;    // lower-case variable or function name: "version_comment", "database()"
};

struct AdminCommand {
  AdminCommandKind kind = AdminCommandKind::kEmpty;
  uint64_t version = 0;            // kRollbackShardMap
  uint64_t limit = 0;              // kShowDigests (0 = all), kShowHotKeys (0 = 20)
  std::string statement;           // kShowRoute: the statement text, trailing ';' removed
  std::vector<SelectItem> items;   // kSelectVariables
};

// nullopt-like error: the message for the ERR packet (unknown or malformed command).
std::expected<AdminCommand, std::string> parseAdminCommand(std::string_view sql);

// The commands, one per line, for HELP and error messages.
std::vector<std::pair<std::string, std::string>> adminCommandHelp();

}  // namespace sp::proxy
