// Catch-up of an online move (issue #17): after the snapshot copy, replays
// the source binlog's changes of the moving keys onto the target table, in
// binlog order, idempotently (replaying an event twice leaves the same rows).
// Whole source transactions are batched: up to batch_transactions of them
// (and about batch_bytes of SQL) go to the target as one transaction in one
// round trip, so the applier keeps up with many small writers; a batch is
// sent when it is full or when the stop position is reached. Consecutive
// statements of one kind are merged across the batch's transactions (one
// multi-row REPLACE, one DELETE of many keys). The statements:
//   insert -> REPLACE INTO target (all columns) VALUES (...)
//   update -> REPLACE the after image; when the primary key changed, or the
//             row left the moving keys, DELETE the before image's key first
//   delete -> DELETE FROM target WHERE (<pk1> = ... AND <pk2> = ...) OR ...
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
#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// The target backend of a catch-up, on one session of its own.
struct CatchupTarget {
  virtual ~CatchupTarget() = default;
  // Runs `statements` as one transaction: all of them or none (an error
  // rolls back). TIMESTAMP literals are UTC (binlogValueLiteral).
  virtual awaitable<Expected<void>> applyTransaction(const std::vector<std::string>& statements) = 0;
};

// A CatchupTarget over one backend connection of its own (not a pooled one).
// A connection opened with CLIENT_MULTI_STATEMENTS (kMultiStatements flavour)
// gets a whole transaction in one packet (one round trip) while it stays
// under `packet_bytes`; otherwise one statement per round trip.
class ConnectionCatchupTarget final : public CatchupTarget {
 public:
  ConnectionCatchupTarget(BackendConnection& connection, size_t packet_bytes)
      : connection_(connection), packet_bytes_(packet_bytes) {}
  awaitable<Expected<void>> applyTransaction(const std::vector<std::string>& statements) override;

 private:
  awaitable<Expected<void>> run(std::string_view sql);
  BackendConnection& connection_;
  size_t packet_bytes_;
  bool time_zone_set_ = false;
};

// "SET time_zone = ...;START TRANSACTION;s1;...;COMMIT" as one multi-statement
// text (the time zone only when `with_time_zone`).
std::string catchupTransactionSql(const std::vector<std::string>& statements, bool with_time_zone);

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
  // A batch (one target transaction) holds at most this many source
  // transactions (moves.catchup_batch_transactions) and stops growing past
  // about this much SQL (moves.catchup_batch_bytes; one bigger source
  // transaction goes alone).
  uint32_t batch_transactions = 500;
  size_t batch_bytes = 4u << 20;
};

struct CatchupProgress {
  protocol::BinlogPosition applied;  // end of the last source transaction applied (or skipped)
  uint64_t events = 0;               // events read
  uint64_t rows_applied = 0;         // row changes written to the target
  uint64_t transactions_applied = 0; // source transactions with matching rows applied
  uint64_t batches_applied = 0;      // target transactions committed (round trips)
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
  // that at least every heartbeat period, and send the batch read so far)
  // or an error.
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
  // The open source transaction joins the batch (sent when full).
  awaitable<Expected<void>> endTransaction();
  // Sends the batch as one target transaction; applied moves to read_.
  awaitable<Expected<void>> flush();
  Expected<void> collect(const protocol::BinlogRowsEvent& rows);
  void dropPending();

  BinlogEventSource& source_;
  CatchupTarget& target_;
  CatchupConfig config_;
  CatchupProgress progress_;
  protocol::BinlogPosition read_;     // end of the last whole source transaction read
  std::vector<std::string> pending_;  // statements of the open source transaction
  uint64_t pending_rows_ = 0;         // row changes in them
  size_t pending_bytes_ = 0;
  std::vector<std::string> batch_;    // statements of whole source transactions not yet sent
  uint64_t batch_rows_ = 0;
  uint64_t batch_transactions_ = 0;
  size_t batch_bytes_ = 0;
  bool in_group_ = false;             // inside a source transaction (GTID/BEGIN .. XID/COMMIT)
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
