// `schema:` of the configuration (docs/admin.md, "Schema changes"): how DDL
// on a logical table is applied to its physical tables. Its own header
// (conf/config.hpp holds the whole configuration).
#pragma once
#include <cstdint>

namespace sp::conf {

struct SchemaConfig {
  // Physical tables changed at once on one backend (each ALTER is one
  // server thread's work; more at once competes with the foreground).
  uint32_t parallel_per_backend = 1;
  // The client's statement returns at once with the change's id
  // (SHOW SCHEMA CHANGES follows it) instead of when every table is done.
  bool async = false;
  // ALGORITHM=COPY (the table rebuilt, writes blocked while it runs) is taken
  // only when the statement names it and this is on; otherwise a change
  // MariaDB cannot make INSTANT or INPLACE with LOCK=NONE is refused.
  bool allow_copy = false;
  // TRUNCATE TABLE <logical> empties every physical table; refused unless on.
  bool allow_truncate = false;
  // Each ALTER waits at most this long for the table's metadata lock (a
  // transaction using the table holds it): past it the table's change fails
  // (RETRY SCHEMA CHANGE) rather than queue every statement on the table.
  uint32_t lock_wait_timeout_s = 10;
};

}  // namespace sp::conf
