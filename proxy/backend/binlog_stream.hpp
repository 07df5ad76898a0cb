// Reads a backend's binary log as a replica would: logs in (the pool's login,
// TLS included), announces checksum support and MariaDB's GTID capability,
// asks for heartbeats, then COM_BINLOG_DUMP from a position; next() yields
// the decoded events (protocol/binlog_decoder.hpp) one by one.
//
// The account needs REPLICATION SLAVE (the dump) and BINLOG MONITOR (SHOW
// BINLOG STATUS); see docs/configuration.md (backends[].replication_user).
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "conf/backend_config.hpp"
#include "protocol/binlog_decoder.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// Errors of the resharding components as values: the human message.
template <class T>
using Expected = std::expected<T, std::string>;

// `backend` as the binlog reader connects to it: the replication account
// (backends[].replication_user, else the backend's own), no database.
conf::BackendConfig replicationBackend(const conf::BackendConfig& backend);

// A source of decoded binlog events: BinlogStream, or a scripted list in
// unit tests of the catch-up applier.
class BinlogEventSource {
 public:
  virtual ~BinlogEventSource() = default;
  // The next event; an error ends the stream (reopen from position()).
  virtual awaitable<Expected<protocol::BinlogEvent>> next() = 0;
  // Where the next event starts (the end of the last one returned).
  virtual protocol::BinlogPosition position() const = 0;
};

struct BinlogStreamOptions {
  // The server sends a HEARTBEAT after this long without events, so next()
  // returns at least this often on a quiet server.
  std::chrono::milliseconds heartbeat_period{1000};
  // next() fails when nothing (not even a heartbeat) arrived for this long:
  // a dead or unreachable server.
  std::chrono::milliseconds read_timeout{10000};
  // Largest event accepted (a row of big BLOBs); at least max_allowed_packet
  // of the source for such rows.
  size_t max_event_bytes = 1u << 30;
  // Keep a copy of each raw event for lastRawEvent() (fixture capture).
  bool keep_raw = false;
  // Start after these GTIDs ("0-1-5,1-2-3", MariaDB's @slave_connect_state;
  // "" = the start of the oldest binary log) instead of at `from`, which is
  // then ignored: the same on a primary and its replicas.
  std::optional<std::string> gtid_connect_state;
};

class BinlogStream final : public BinlogEventSource {
 public:
  // Connects with `backend`'s address, TLS and credentials (pass
  // replicationBackend(config)), then starts the dump at
  // `from`. `replica_server_id` must differ from every server_id of the
  // replication topology (the source refuses its own id). Runs on the
  // caller's executor. (Arguments are lvalues at every call: GCC 12
  // destroys temporaries passed to a coroutine twice.)
  static awaitable<Expected<std::unique_ptr<BinlogStream>>> open(const conf::BackendConfig& backend,
                                                                 const protocol::BinlogPosition& from,
                                                                 uint32_t replica_server_id,
                                                                 const BinlogStreamOptions& options);

  awaitable<Expected<protocol::BinlogEvent>> next() override;
  protocol::BinlogPosition position() const override { return decoder_.position(); }
  // Closes the connection (the server's dump thread ends with it).
  void close();
  // The bytes of the event next() returned last (with keep_raw).
  const protocol::Bytes& lastRawEvent() const { return last_raw_; }

  BinlogStream(std::unique_ptr<BackendConnection> connection, const protocol::BinlogPosition& from, bool checksum,
               const BinlogStreamOptions& options);
  ~BinlogStream() override;

 private:
  std::unique_ptr<BackendConnection> connection_;
  protocol::BinlogDecoder decoder_;
  BinlogStreamOptions options_;
  protocol::Bytes last_raw_;
};

// The current end of the binary log (SHOW BINLOG STATUS): events written
// after this point start here. Needs BINLOG MONITOR.
awaitable<Expected<protocol::BinlogPosition>> binlogEndPosition(BackendConnection& connection);

// The binlog position matching the snapshot of the transaction open on
// `connection` (after START TRANSACTION WITH CONSISTENT SNAPSHOT): rows the
// snapshot reads include exactly the events before it
// (SHOW STATUS LIKE 'binlog_snapshot_%').
awaitable<Expected<protocol::BinlogPosition>> binlogSnapshotPosition(BackendConnection& connection);

// The primary key columns of schema.table, in key order
// (information_schema.KEY_COLUMN_USAGE); empty when the table has none.
// Run it on a connection of an account that can see the table (the proxy's
// backend account; the replication account sees no table).
awaitable<Expected<std::vector<std::string>>> primaryKeyColumns(BackendConnection& connection,
                                                                std::string_view schema,
                                                                std::string_view table);

}  // namespace sp::proxy
