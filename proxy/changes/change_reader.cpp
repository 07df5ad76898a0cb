#include "proxy/changes/change_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "conf/config.hpp"
#include <spdlog/spdlog.h>

#include "proxy/backend/binlog_stream.hpp"
#include "proxy/changes/column_lookup.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/core/replica_health.hpp"
#include "proxy/core/topology.hpp"

namespace sp::proxy::changes {

namespace {

constexpr std::chrono::milliseconds kRetryFirst{200};
constexpr std::chrono::milliseconds kRetryMax{5000};
constexpr std::chrono::milliseconds kRecheck{100};
// After moving to another server, its refusal of the position is retried this
// long: a promoted or newly chosen replica may still be applying the GTIDs
// the stream has passed.
constexpr std::chrono::seconds kCatchUpGrace{10};

awaitable<void> sleepFor(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(d);
  co_await t.async_wait(kNoThrow);
}

void wake(asio::steady_timer& t) { t.cancel(); }

// Waits until the queue has room for more or the stream closed.
awaitable<void> waitForRoom(ReaderQueue& q, StreamSignals& s) {
  while (!s.closed && q.rows >= q.capacity && !q.transactions.empty()) {
    s.space.expires_at(asio::steady_timer::time_point::max());
    co_await s.space.async_wait(kNoThrow);
  }
}

// How a drain ended: closed (empty error), a lost connection (reopen after
// a pause), the server's refusal or undecodable events (fatal), or the
// server to read changed (a role change, a replica up or down: reopen there now).
struct DrainEnd {
  std::string error;
  bool fatal = false;
  bool moved = false;
};

// A server's label: the primary's login keeps the backend's name whichever
// server is primary, so the address tells them apart.
std::string serverLabel(const conf::BackendConfig& server) {
  return fmt::format("{} ({}:{})", server.name, server.address.host, server.address.port);
}

// Whether a server other than the one read (q.server) is to be read now (checked every
// kRecheck while reading, on events and heartbeats alike).
bool serverChanged(const ProxyContext& context, const ReaderQueue& q, const std::string& source) {
  auto now = readerServer(context, q.backend, source);
  return now && serverLabel(*now) != q.server;
}

// A streamed table's rows event that carries no column names and must get them.
bool needsNames(const protocol::BinlogEvent& event, const ReaderQueue& q, const ChangeTables& tables) {
  const auto* r = std::get_if<protocol::BinlogRowsEvent>(&event.body);
  return r && r->column_names.empty() && r->schema == q.schema && tables.find(r->table) &&
         !(event.header.flags & kSkipReplicationFlag);
}

// Reads one opened stream until it fails, the stream closes or the server to read changes.
awaitable<DrainEnd> drain(BinlogStream& stream, ChangeAssembler& assembler, ColumnLookup& columns,
                          const ReaderSetup& setup, ReaderQueue& q, StreamSignals& s) {
  ProxyContext& context = *setup.context;
  auto checked = std::chrono::steady_clock::now();
  for (;;) {
    auto event = co_await stream.next();
    if (s.closed) co_return DrainEnd{};
    if (!event) co_return DrainEnd{event.error(), event.error().find("source error") != std::string::npos};
    if (std::chrono::steady_clock::now() - checked >= kRecheck) {
      checked = std::chrono::steady_clock::now();
      if (serverChanged(context, q, setup.config.source)) co_return DrainEnd{"the server to read changed", false, true};
    }
    if (std::holds_alternative<protocol::BinlogHeartbeatEvent>(event->body)) {
      q.caught_up = true;
      wake(s.data);
      continue;
    }
    if (needsNames(*event, q, *setup.tables)) {
      if (auto failed = co_await columns.name(std::get<protocol::BinlogRowsEvent>(event->body))) {
        co_return DrainEnd{failed->message, failed->fatal};
      }
    }
    auto txn = assembler.feed(*event);
    if (!txn) co_return DrainEnd{txn.error(), true};
    q.caught_up = false;
    if (!*txn) continue;
    if ((*txn)->skipped_rows) context.change_stats.maintenance_rows.fetch_add((*txn)->skipped_rows);
    if ((*txn)->gtid) q.read_to.advance(*(*txn)->gtid);
    q.rows += (*txn)->rows.size();
    q.transactions.push_back(std::move(**txn));
    wake(s.data);
    co_await waitForRoom(q, s);
    if (s.closed) co_return DrainEnd{};
  }
}

// The pause before reopening; over early when another server is to be read
// (the failover of a dead primary: no need to wait out the backoff).
awaitable<void> pauseBeforeRetry(std::chrono::milliseconds pause, const ReaderSetup& setup, const ReaderQueue& q,
                                 const StreamSignals& s) {
  const auto until = std::chrono::steady_clock::now() + pause;
  while (!s.closed && std::chrono::steady_clock::now() < until) {
    if (serverChanged(*setup.context, q, setup.config.source)) co_return;
    co_await sleepFor(std::min<std::chrono::milliseconds>(
        kRecheck, std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()) +
                      std::chrono::milliseconds(1)));
  }
}

}  // namespace

std::optional<conf::BackendConfig> readerServer(const ProxyContext& context, const std::string& backend,
                                                const std::string& source) {
  if (source == "replicas") {
    auto topology = context.topology.load();
    auto health = context.replica_health.load();
    if (topology && health) {
      for (auto& login : replicaLogins(context.config(), *topology, backend)) {
        const ServerHealth* h = health->find(login.name);
        if (h && servesReads(*h)) return login;
      }
    }
  }
  return currentPrimary(context, backend);
}

std::optional<conf::BackendConfig> readerLogin(const ProxyContext& context, const std::string& backend,
                                               const std::string& source) {
  auto server = readerServer(context, backend, source);
  if (!server) return std::nullopt;
  return replicationBackend(*server);
}

awaitable<void> runReader(ReaderSetup setup, std::shared_ptr<ReaderQueue> queue,
                          std::shared_ptr<StreamSignals> signals) {
  auto& q = *queue;
  auto& s = *signals;
  auto& context = *setup.context;
  std::chrono::milliseconds retry = kRetryFirst;
  std::chrono::steady_clock::time_point moved_at{};
  while (!s.closed) {
    auto server = readerServer(context, q.backend, setup.config.source);
    if (!server) {
      q.fatal = fmt::format("backend {} is not in the configuration", q.backend);
      break;
    }
    if (!q.server.empty() && q.server != serverLabel(*server)) {
      spdlog::info("change stream: reader of {} moves from {} to {} at {}", q.backend, q.server, serverLabel(*server),
                   q.read_to.connectState());
      moved_at = std::chrono::steady_clock::now();
      retry = kRetryFirst;
    }
    q.server = serverLabel(*server);
    const conf::BackendConfig login = replicationBackend(*server);
    BinlogStreamOptions options;
    options.heartbeat_period = std::chrono::milliseconds(setup.config.heartbeat_ms);
    options.read_timeout = std::max(std::chrono::milliseconds(10'000), 4 * options.heartbeat_period);
    options.gtid_connect_state = q.read_to.connectState();
    const protocol::BinlogPosition unused;  // by GTID; an lvalue (GCC 12 destroys coroutine temporaries twice)
    auto stream = co_await BinlogStream::open(login, unused, setup.server_id, options);
    DrainEnd end;
    if (stream) {
      ChangeAssembler assembler(q.backend, q.schema, *setup.tables, setup.config.max_transaction_events);
      ColumnLookup columns(q.backend, *server);
      end = co_await drain(**stream, assembler, columns, setup, q, s);
      (*stream)->close();
      if (end.error.empty()) break;  // closed
      retry = kRetryFirst;
    } else {
      end.error = stream.error();
    }
    if (end.moved) continue;  // reopen on the server to read now, from the last transaction queued
    const bool catching_up = std::chrono::steady_clock::now() - moved_at < kCatchUpGrace;
    if (end.fatal && !catching_up) {
      q.fatal = fmt::format("change stream reader of {}: {}", q.backend, end.error);
      break;
    }
    context.change_stats.reader_errors.fetch_add(1);
    spdlog::warn("change stream: reader of {} ({}): {}; reopening from {} in {} ms", q.backend, q.server, end.error,
                 q.read_to.connectState(), retry.count());
    q.caught_up = false;
    co_await pauseBeforeRetry(retry, setup, q, s);
    retry = std::min(retry * 2, kRetryMax);
  }
  if (!q.fatal.empty()) spdlog::warn("{}", q.fatal);
  wake(s.data);
}

}  // namespace sp::proxy::changes
