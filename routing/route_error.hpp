// Why the planner refused a statement. Each code has a fixed MySQL error
// number and SQLSTATE (the session turns a Refusal into an ERR packet); the
// full list with hints is in docs/routing.md.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sp::routing {

enum class RouteErrorCode : uint16_t {
  kParseError = 9100,          // names a sharded table but does not parse
  kMissingKey = 9101,          // no shard key value in the WHERE clause
  kMultiShard = 9102,          // key values on several shards (scatter-gather not available)
  kBadKeyValue = 9103,         // key compared with a value that is not an exact unsigned integer
  kNegativeKey = 9104,         // negative key (a Bot API -100... id instead of the canonical id)
  kMissingMonthBound = 9105,   // month-partitioned table without a lower and an upper month bound
  kMonthSpanTooLong = 9106,    // month bounds span more than max_span_months
  kBadMonthValue = 9107,       // month/time bound that is not a 'YYYY-MM-DD[ HH:MM:SS]' literal
  kInsertWithoutKey = 9108,    // INSERT rows without the key column (or without a column list)
  kInsertMultiShard = 9109,    // INSERT rows landing on several shards
  kShardKeyUpdate = 9110,      // UPDATE / ON DUPLICATE KEY UPDATE sets the key or month columns
  kMonthMismatch = 9111,       // inserted month column is not the first day of the time column's month
  kCrossShardJoin = 9112,      // join with another sharded table or a table on another backend
  kUnsupported = 9113,         // shape not routable yet (subquery, UNION, INSERT ... SELECT, ...)
  kCrossBackend = 9114,        // physical tables named directly live on different backends
  kTooComplex = 9115,          // over a parser budget (limits.max_statement_nodes / _expression_depth / _in_list_values)
  // Access (routing/access_check.hpp, docs/security.md):
  kPrivateTable = 9116,        // a physical shard table named by a user without users[].physical_tables
  kUncheckedDynamicSql = 9117, // PREPARE / EXECUTE IMMEDIATE of a text that is not a literal (statement policy)
  // Data lifecycle (docs/admin.md, "Data lifecycle"):
  kArchivedMonth = 9122,       // a write into a month whose partitions ARCHIVE ... BEFORE dropped
};

struct RouteErrorInfo {
  uint16_t mysql_errno;
  std::string_view sqlstate;
  std::string_view name;  // stable identifier, e.g. "missing_key"
};

RouteErrorInfo routeErrorInfo(RouteErrorCode code);

// A refusal: the code plus a message naming the table, what is missing and a hint.
// Messages start with "shardproxy: ".
struct Refusal {
  RouteErrorCode code = RouteErrorCode::kUnsupported;
  std::string message;
};

}  // namespace sp::routing
