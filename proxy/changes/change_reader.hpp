// One backend's binlog reader of a change stream: reads the backend's
// binary log from a GTID state (a healthy replica under changes.source:
// replicas, else the current primary), turns its events into committed
// transactions (change_assembler.hpp) and queues them for the stream's
// merge, waiting while the queue holds changes.buffer_events / backends row
// changes (a slow consumer makes the reader wait: it never buffers more). A
// lost connection is reopened from the last transaction queued, and so is the
// stream when the server to read changes (a role change: the GTID position
// is the same on every server of the group); an error of the server (a GTID
// it no longer has) or of decoding ends the reader, except within
// kCatchUpGrace of such a move (the new server may still be applying the
// position's GTIDs). Row events without column names get them from
// information_schema (column_lookup.hpp).
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "conf/backend_config.hpp"
#include "conf/changes_config.hpp"
#include "proxy/changes/change_assembler.hpp"
#include "proxy/changes/change_position.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {
struct ProxyContext;
}

namespace sp::proxy::changes {

// What the reader and the merge share (one executor: no locks).
struct ReaderQueue {
  std::string backend;
  std::string schema;               // the backend's database
  std::deque<ChangeTransaction> transactions;
  size_t rows = 0;                  // row changes queued
  size_t capacity = 1;              // row changes queued at most (one transaction goes in whatever its size)
  BackendGtids read_to;             // after the last transaction queued
  bool caught_up = false;           // the server said it had nothing more (a heartbeat) since the last one
  std::string fatal;                // the reader ended: why
  std::string server;               // the server read now: "name (host:port)"
};

// The timers used as wake-ups (cancel() wakes every waiter) and the stop flag.
struct StreamSignals {
  explicit StreamSignals(const asio::any_io_executor& ex) : data(ex), space(ex) {}
  asio::steady_timer data;   // the merge waits here for a queue to grow
  asio::steady_timer space;  // readers wait here for room
  bool closed = false;
};

struct ReaderSetup {
  ProxyContext* context = nullptr;
  conf::ChangesConfig config;
  std::shared_ptr<const ChangeTables> tables;
  uint32_t server_id = 0;
};

// Runs until signals->closed or a fatal error; co_spawn it on the stream's executor.
awaitable<void> runReader(ReaderSetup setup, std::shared_ptr<ReaderQueue> queue,
                          std::shared_ptr<StreamSignals> signals);

// The server a reader of `backend` reads now: under changes.source: replicas
// the first healthy replica, else (and always under source: primary) the
// current primary (it follows SWITCHOVER and FAILOVER). Its application login.
std::optional<conf::BackendConfig> readerServer(const ProxyContext& context, const std::string& backend,
                                                const std::string& source);
// The same with the backend's replication account (for the binlog dump).
std::optional<conf::BackendConfig> readerLogin(const ProxyContext& context, const std::string& backend,
                                               const std::string& source);

}  // namespace sp::proxy::changes
