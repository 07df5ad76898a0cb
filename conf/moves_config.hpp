// `moves:` of the configuration (docs/admin.md, "Online moves").
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>

namespace sp::conf {

// Online moves (docs/admin.md, "Online moves"): copy batches, the write
// hold of the cut-over, verify chunks.
struct MovesConfig {
  uint32_t batch_rows = 1000;          // rows per copy batch (SELECT ... LIMIT, one REPLACE on the target)
  uint32_t pause_ms = 0;               // sleep between copy batches (throttle)
  uint32_t hold_timeout_ms = 1000;     // a write held by a cut-over waits at most this long, then 9135
  uint32_t hold_max_waiting = 10000;   // writes waiting at once for cut-overs; more are refused with 9136
  uint32_t drain_timeout_ms = 500;     // writes in flight must end within this at a cut-over, else it is retried
  uint32_t cutover_attempts = 5;       // cut-over attempts before the move fails (routing stays on the source)
  uint32_t verify_chunk_rows = 1000;   // rows per checksum chunk of a verify
  uint64_t cutover_lag_bytes = 65536;  // catch up until less than this much binlog is left, then cut over
  uint32_t catchup_rounds = 100;       // catch-up rounds per attempt to get below cutover_lag_bytes
  uint32_t catchup_batch_transactions = 500;  // source transactions applied per target transaction (round trip)
  uint64_t catchup_batch_bytes = 4ull << 20;  // SQL per catch-up batch (below the target's max_allowed_packet)
  uint32_t replica_server_id = 3000000000u;  // server_id of the catch-up's binlog reader (+ move id)
};

}  // namespace sp::conf
