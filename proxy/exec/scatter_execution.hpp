// Scatter execution: one statement on several shards, merged. Every shard's
// query is sent before any answer is read (the shards work in parallel),
// then rows are pulled in the order routing's ResultMerger needs them and the
// merged rows stream to the client. A shard that fails fails the whole
// statement with an error naming the shard: a partial result is never passed
// off as complete. Runs over ShardChannels (borrowed, synced connections in
// production; scripted shards in unit tests); the caller borrows and releases.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "protocol/generic_packets.hpp"
#include "proxy/net/client_sink.hpp"
#include "proxy/exec/shard_channel.hpp"
#include "routing/merge/merge_budget.hpp"
#include "routing/merge/merge_spec.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

struct ScatterShard {
  ShardChannel* channel = nullptr;
  const routing::RouteTarget* target = nullptr;  // its SQL and its name in errors
  // For the slow-query log (ScatterOptions::timed): from sending its query
  // to its last packet, and its rows.
  uint64_t micros = 0;
  uint64_t rows = 0;
  std::chrono::steady_clock::time_point sent{};
};

struct ScatterOptions {
  uint32_t client_capabilities = 0;
  uint16_t status_flags = 0;       // the session's, for the EOF/OK ending the rows
  bool binary_rows = false;        // a COM_STMT_EXECUTE: binary rows from the merged text rows
  size_t max_merge_bytes = 0;      // scatter.max_merge_bytes
  std::chrono::milliseconds shard_timeout{0};  // scatter.shard_timeout_ms (for messages; channels enforce it)
  bool timed = false;              // measure each shard (ScatterShard::micros)
  uint32_t client_mariadb_capabilities = 0;  // MariaDB's extended flags of the client (column definitions)
  // This statement's share of scatter.max_merge_bytes_total (the caller's:
  // it words the refusal and frees the share); null: no global budget.
  routing::MergeBudget::Reservation* merge_memory = nullptr;
};

struct ScatterOutcome {
  bool client_failed = false;                // the client went away
  std::optional<protocol::ErrPacket> error;  // to send at error_seq (nothing more was sent after the rows so far)
  uint8_t error_seq = 0;
  bool shard_timed_out = false;
  uint64_t rows = 0;                         // merged rows sent
  uint64_t row_bytes = 0;                    // bytes of the merged rows sent
  uint64_t merge_peak_bytes = 0;             // most bytes the merge held at once
  // The global merge budget could not cover this merge: the caller sends
  // its refusal (9006) at error_seq; nothing more was sent after the rows so far.
  bool merge_memory_exhausted = false;
};

awaitable<ScatterOutcome> executeScatter(std::span<ScatterShard> shards, const routing::MergeSpec& merge,
                                         ClientSink& client, uint8_t first_seq, const ScatterOptions& options);

}  // namespace sp::proxy
