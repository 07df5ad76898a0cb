// Catch-up of an online move (issue #17): after the snapshot copy, replays
// the source binlog's changes of the moving keys onto the target table, in
// binlog order, one target transaction per source transaction, idempotently
// (replaying an event twice leaves the same rows):
//   insert -> REPLACE INTO target (all columns) VALUES (...)
//   update -> REPLACE the after image; when the primary key changed, or the
//             row left the moving keys, DELETE the before image's key first
//   delete -> DELETE FROM target WHERE <primary key> = ...
// A row matches when the filter's predicate holds for its key column; an
// update matches when its before or its after image does.
//
// Use in a move: START TRANSACTION WITH CONSISTENT SNAPSHOT on the source,
// binlogSnapshotPosition(), copy the keys, COMMIT; BinlogStream::open(
// replicationBackend(source), that position, ...); runFollowing() while the
// lag shrinks (requestStop() from the move's controller); hold the writes,
// binlogEndPosition() of the source, runUntil(it); switch the map. After an
// error (stream lost, target failed), open a new stream and MoveCatchup from
// progress().applied: it is always the end of a whole source transaction,
// and replaying from there is harmless.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/binlog_decoder.hpp"
#include "proxy/backend_connection.hpp"
#include "proxy/binlog_stream.hpp"
#include "proxy/net.hpp"

namespace sp::proxy {

// Runs SQL on the target backend, on one session of its own (the applier
// sets time_zone there once and relies on it).
struct CatchupTarget {
  virtual ~CatchupTarget() = default;
  virtual awaitable<Expected<void>> apply(std::string_view sql) = 0;
};

// A CatchupTarget over one backend connection of its own (not a pooled one).
class ConnectionCatchupTarget final : public CatchupTarget {
 public:
  explicit ConnectionCatchupTarget(BackendConnection& connection) : connection_(connection) {}
  awaitable<Expected<void>> apply(std::string_view sql) override;

 private:
  BackendConnection& connection_;
};

struct CatchupFilter {
  std::string schema;      // source schema
  std::string table;       // source physical table (msg_05)
  std::string key_column;  // conv_id / peer_id
  std::function<bool(const protocol::BinlogValue&)> matches;
};

struct CatchupConfig {
  CatchupFilter filter;
  std::string target_table;  // as written in SQL: `im`.`msg_05_new` (quoted as needed)
  // Primary key columns (primaryKeyColumns() on the source); empty: the
  // TABLE_MAP's (binlog_row_metadata=FULL logs it).
  std::vector<std::string> primary_key;
};

struct CatchupProgress {
  protocol::BinlogPosition applied;  // end of the last source transaction applied (or skipped)
  uint64_t events = 0;               // events read
  uint64_t rows_applied = 0;         // row changes written to the target
  uint64_t transactions_applied = 0; // target transactions committed
  uint32_t last_event_time = 0;      // source timestamp (unix seconds) of the last event read
};

class MoveCatchup {
 public:
  MoveCatchup(BinlogEventSource& source, CatchupTarget& target, CatchupConfig config);

  // Applies until the applied position reaches `stop` (a source transaction
  // ending at or after it is applied whole). The write hold's end position
  // (binlogEndPosition) is the usual `stop`.
  awaitable<Expected<void>> runUntil(const protocol::BinlogPosition& stop);  // an lvalue (GCC 12)
  // Applies until requestStop() (checked after each event; heartbeats make
  // that at least every heartbeat period) or an error.
  awaitable<Expected<void>> runFollowing();
  void requestStop() { stop_requested_.store(true); }

  const CatchupProgress& progress() const { return progress_; }
  // Bytes of binlog between the applied position and `source_end` (same
  // file), or nullopt when they are in different files.
  std::optional<uint64_t> lagBytes(const protocol::BinlogPosition& source_end) const;
  // Seconds between now and the source time of the last event read.
  std::chrono::seconds lagSeconds() const;

 private:
  awaitable<Expected<void>> step();
  awaitable<Expected<void>> commit();
  Expected<void> collect(const protocol::BinlogRowsEvent& rows);

  BinlogEventSource& source_;
  CatchupTarget& target_;
  CatchupConfig config_;
  CatchupProgress progress_;
  std::vector<std::string> pending_;  // statements of the open source transaction
  uint64_t pending_rows_ = 0;         // row changes in them
  bool in_group_ = false;             // inside a source transaction (GTID/BEGIN .. XID/COMMIT)
  bool time_zone_set_ = false;
  std::atomic<bool> stop_requested_{false};
};

// The statements of one rows event for the target (empty when no row
// matches) and how many of its row changes they carry; unit-tested without
// a stream.
struct CatchupStatements {
  std::vector<std::string> sql;
  uint64_t rows = 0;
};
Expected<CatchupStatements> catchupStatements(const protocol::BinlogRowsEvent& rows, const CatchupConfig& config);

}  // namespace sp::proxy
