// `overload:` of the configuration (docs/configuration.md): how statements
// wait for a backend's concurrency budget (backends[].max_active_statements).
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sp::conf {

// The opt-in policy that gives a hot key of a bucket table a shard of its own
// (docs/availability.md, "Isolating a hot key automatically"): when one key
// value keeps more than min_shard_share_pct of its shard's keyed statements,
// at min_statements_per_second or more, for sustain_seconds, the proxy runs
// MOVE KEY for it. Off by default: a move copies rows and holds the key's
// writes at its cut-over; an operator turns it on knowing the tables.
struct HotKeyAutoMoveConfig {
  bool enabled = false;
  uint32_t min_shard_share_pct = 50;
  // A floor on the key's own rate: an idle shard's only key has a share of
  // 100% and still is not hot.
  uint32_t min_statements_per_second = 100;
  uint32_t sustain_seconds = 60;
  // Between two moves of the policy, counted from the start of the previous
  // one whether it succeeded, failed or was refused: no retry storm.
  uint32_t cooldown_seconds = 600;
  // Shard names a moved key may go to (empty: any other shard of the table);
  // the least busy of them in keyed statements is chosen.
  std::vector<std::string> target_shards;
};

// Statements beyond a server's budget wait in its queue (docs/availability.md,
// "Overload: per-backend budget"); past either bound they are refused.
struct OverloadConfig {
  uint32_t queue_timeout_ms = 1000;       // longest wait of one statement (9145 after it)
  uint32_t max_queued_per_backend = 1000; // statements waiting for one server at once (9146 beyond)
  // Hot keys ("Overload: hot keys"): writes to one shard-key value in flight
  // at once (0: off; beyond: they wait, queue_timeout_ms then 9148), writes
  // waiting for one key (9149 beyond), and counters per table of SHOW HOT KEYS.
  // Off by default: serialising changes when writes to one key may fail
  // (9148 after queue_timeout_ms instead of the backend's lock wait); an
  // operator turns it on knowing the application's write pattern.
  uint32_t hot_key_concurrency = 0;
  uint32_t hot_key_max_queued = 1000;
  uint32_t hot_keys_tracked = 64;
  // Writes to one shard-key value per second (0: off): beyond, they wait for
  // their turn (hot_key_pacer.hpp), 9147 when it is further than
  // queue_timeout_ms away. What bounds the CPU one hot key takes from the
  // other tenants of its shard; off by default for the same reason.
  uint32_t hot_key_max_per_second = 0;
  HotKeyAutoMoveConfig hot_key_auto_move;
};

}  // namespace sp::conf
