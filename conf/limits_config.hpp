// `limits:` of the configuration (docs/configuration.md): per-statement
// and per-session budgets.
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>

namespace sp::conf {

// Per-statement and per-session budgets (docs/configuration.md, section `limits`).
struct LimitsConfig {
  uint32_t max_statement_nodes = 500000;     // parsed expression nodes and table references
  uint32_t max_expression_depth = 4000;      // nesting depth of the parsed tree
  uint32_t max_in_list_values = 100000;      // values in one IN (...) list
  // Per session (issue 12): what one client may make the proxy hold.
  uint32_t max_prepared_statements_per_session = 16382;  // MariaDB's max_prepared_stmt_count default
  uint64_t max_long_data_bytes_per_session = 64ull << 20;  // COM_STMT_SEND_LONG_DATA bytes held
  uint64_t local_infile_max_bytes = 1ull << 30;  // one LOAD DATA LOCAL file (relayed, never held); 0 = no limit
  // All worker threads' plan caches together (each gets an equal share).
  uint64_t max_plan_cache_bytes = 64ull << 20;
  // Backend connections one user's pinned sessions (transactions, user
  // variables, temporary tables, locks) may hold at once, all workers
  // together; 0 = no limit. users[].max_pinned_connections overrides it.
  uint32_t max_pinned_connections_per_user = 0;
};

}  // namespace sp::conf
