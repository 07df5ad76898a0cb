// The planner's output: where a statement goes and the SQL each target
// receives, or why it is refused. Plans point into the CompiledShardMap they
// were made with (Plan::table), so the caller keeps that snapshot alive.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/ast.hpp"
#include "parser/dialect.hpp"
#include "parser/parse.hpp"
#include "routing/merge/merge_spec.hpp"
#include "routing/map/month.hpp"
#include "routing/route_error.hpp"
#include "routing/name_scope.hpp"
#include "routing/map/shard_map.hpp"
#include "routing/values.hpp"

namespace sp::routing {

struct RouteTarget {
  std::string backend;
  std::string shard;           // shard name; empty for unsharded / directly named physical tables
  std::string physical_table;  // the routed table's physical name; empty when unsharded
  std::string sql;             // what the backend receives
};

enum class PlanKind : uint8_t {
  kPassthrough,  // touches no sharded table: default backend, SQL unchanged
  kRoute,        // single target (a shard, or the backend of a directly named physical table)
  kMultiRoute,   // one target per shard, each with its own SQL (only with PlannerInput::split_in_lists)
  kRefused,
  kScatter,      // Plan::scatter: several shards queried at once, results merged by a ResultMerger
  // A multi-row INSERT / REPLACE split per shard (only with
  // PlannerInput::multi_shard_writes = kBestEffort): Plan::targets holds one
  // target per shard, each with the statement cut down to that shard's rows,
  // ordered by the shard's first row in the statement (the first target holds
  // the statement's first row). Every part is a separate write: nothing makes
  // them atomic together.
  kMultiWrite,
};

// What a multi-row INSERT / REPLACE whose rows land on several shards becomes.
enum class MultiShardWrites : uint8_t {
  kRefuse,      // refused (insert_multi_shard, 9109) with the shard list
  kBestEffort,  // split per shard (PlanKind::kMultiWrite); the parts are not atomic
};

// A statement spread over several shards: every target is queried (in
// parallel) and the result sets are combined as `merge` says, so the client
// sees what one server holding all rows would return.
struct ScatterPlan {
  std::vector<RouteTarget> targets;  // one per shard, each with its own SQL
  MergeSpec merge;
};

struct Plan {
  PlanKind kind = PlanKind::kRefused;
  std::vector<RouteTarget> targets;  // one for kPassthrough / kRoute; per shard for kMultiRoute
  std::optional<Refusal> refusal;    // kRefused
  std::optional<ScatterPlan> scatter;  // kScatter (targets then repeats scatter->targets)
  const TableRule* table = nullptr;  // the sharded table routed, if any
  std::vector<uint64_t> key_values;  // shard key values found, sorted
  std::optional<MonthRange> months;  // month tables: the months the statement may touch
  // The key predicates contradict each other (conv_id = 1 AND conv_id = 2):
  // no row matches, so any one shard answers correctly (with the right
  // column metadata) and the plan sends it to one.
  bool provably_empty = false;
  bool depends_on_params = false;  // a `?` value decided the plan: do not reuse it for other values
  // The routed SQL repeats parts of the statement's text (the WHERE and ORDER
  // BY of hot-then-cold branches, routing/archive_read.hpp): the plan cache
  // plans the client's own text for it, as for split plans.
  bool copies_text = false;
};

struct PlannerInput {
  const CompiledShardMap& map;
  std::string_view default_backend;
  std::span<const ParamValue> params = {};  // prepared statements: the bound values
  // A SELECT whose `key IN (...)` values live on several shards becomes a
  // kMultiRoute plan: each shard gets the statement with only its own values
  // in the IN lists. Off (refused as multi_shard) until the executor merges
  // results (scatter-gather).
  bool split_in_lists = false;
  // Statements spanning shards (key IN lists over several shards, or no key
  // when the table's scatter policy allows it) become kScatter plans. Takes
  // precedence over split_in_lists.
  bool allow_scatter = true;
  // Multi-row INSERT / REPLACE over several shards (config scatter.multi_shard_writes).
  MultiShardWrites multi_shard_writes = MultiShardWrites::kRefuse;
  // Per-statement parser budgets (config `limits`); a statement over one is
  // refused with 9115 whatever tables it names.
  parser::ParseLimits limits = {};
  // How the server reads the session's statements (sql_mode flags, client
  // charset, version for /*!NNNNN */ comments; parser/dialect.hpp). A dialect
  // the parser does not support is refused on sharded tables.
  parser::Dialect dialect = {};
  // How the backends resolve table names (schema, current database,
  // lower_case_table_names): a name that is not the shard map's table as
  // the server reads it is an unsharded table (routing/name_scope.hpp).
  NameScope names = {};
};

// Plans a parsed statement; `sql` is the text it was parsed from.
Plan planStatement(const parser::Statement& statement, std::string_view sql, const PlannerInput& input);

// Parses and plans. A statement that does not parse is refused when its
// tokens name a sharded table (logical or physical), else passed through.
Plan planQuery(std::string_view sql, const PlannerInput& input);

}  // namespace sp::routing
