// DDL on a logical table (docs/admin.md, "Schema changes"): which statement
// it is, and the statement for each physical table it becomes. Pure: the
// proxy's schema-change runner (proxy/schema/) runs them, one table at a time
// per backend, recorded and resumable.
//
// Recognised, by a lexical scan (DDL has no syntax tree here):
//   ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] <logical> <changes>
//   CREATE [OR REPLACE] [ONLINE|OFFLINE] [UNIQUE|FULLTEXT|SPATIAL] INDEX [IF NOT EXISTS] <name> ... ON <logical> ...
//   DROP INDEX [IF EXISTS] <name> ON <logical> ...
//   CREATE TABLE [IF NOT EXISTS] <logical> ...   (creates the physical tables that do not exist)
//   TRUNCATE [TABLE] <logical>                   (only with schema.allow_truncate)
// Refused with a reason: DROP TABLE or RENAME TABLE naming a logical table,
// ALTER TABLE ... RENAME, partition clauses (partitions have their own
// commands), a statement naming two tables.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::routing {

enum class LogicalDdlKind : uint8_t { kAlterTable, kCreateIndex, kDropIndex, kCreateTable, kTruncate };
std::string_view toString(LogicalDdlKind kind);

struct LogicalDdl {
  LogicalDdlKind kind = LogicalDdlKind::kAlterTable;
  std::string table;             // the logical table, as the map names it
  std::string statement;         // the statement as written, trailing ';' and blanks removed
  uint32_t name_begin = 0;       // the table name's span in `statement` (with its qualifier)
  uint32_t name_end = 0;
  bool algorithm_given = false;  // the statement names ALGORITHM (or LOCK): kept as written
  bool copy = false;             // ... and it is ALGORITHM=COPY
  // DROP INDEX: "INDEX [IF EXISTS] name" as written. MariaDB's DROP INDEX
  // takes no ALGORITHM or LOCK, so it runs as ALTER TABLE ... DROP <this>.
  std::string drop_index_clause;
};

// nullopt: not DDL on a logical table (the caller goes on as before).
// An error: DDL on a logical table the proxy refuses, the message says why.
std::optional<std::expected<LogicalDdl, std::string>> recognizeLogicalDdl(std::string_view sql,
                                                                          const CompiledShardMap& map,
                                                                          const parser::Dialect& dialect = {});

// One physical table a change applies to.
struct PhysicalTarget {
  std::string backend;
  std::string table;  // msg_07, msg_archive_07, tg_channel_message_backfill_s02
  std::string role;   // "shard", "archive" or "backfill"
};

// Every physical table of `rule` the change applies to: each shard's table,
// and for ALTER / index changes / TRUNCATE also its archive and backfill
// tables (they hold the same rows' columns). In shard order.
std::vector<PhysicalTarget> physicalTargets(const LogicalDdl& ddl, const TableRule& rule);

// The ways a change may run, tried in this order until the server takes one
// (the first that MariaDB cannot do answers 1845/1846 and changes nothing).
enum class DdlAlgorithm : uint8_t { kAsWritten, kInstant, kInplaceNoLock };
std::string_view toString(DdlAlgorithm algorithm);
// The algorithms to try: as written when the statement names one (or for
// CREATE TABLE and TRUNCATE, which have none); else INSTANT, then INPLACE
// with LOCK=NONE.
std::vector<DdlAlgorithm> algorithmsToTry(const LogicalDdl& ddl);

// The statement for one physical table: the name replaced by `physical`
// (backquoted, unqualified: it runs in the backend's database), with the
// algorithm clause for `algorithm` appended.
std::string physicalStatement(const LogicalDdl& ddl, std::string_view physical, DdlAlgorithm algorithm);

// Server errors meaning "not with this algorithm" (nothing was changed):
// ER_ALTER_OPERATION_NOT_SUPPORTED (1845), ..._REASON (1846).
bool isAlgorithmRefusal(uint16_t error_code);

}  // namespace sp::routing
