#include "proxy/changes/change_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "conf/config.hpp"
#include <spdlog/spdlog.h>

#include "proxy/backend/binlog_stream.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/core/replica_health.hpp"
#include "proxy/core/topology.hpp"

namespace sp::proxy::changes {

namespace {

constexpr std::chrono::milliseconds kRetryFirst{200};
constexpr std::chrono::milliseconds kRetryMax{5000};

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

// Reads one opened stream until it fails; returns the error (fatal when the
// server refused or the events cannot be read).
awaitable<std::pair<std::string, bool>> drain(BinlogStream& stream, ChangeAssembler& assembler, ReaderQueue& q,
                                              StreamSignals& s, ProxyContext& context) {
  for (;;) {
    auto event = co_await stream.next();
    if (s.closed) co_return std::pair{std::string(), false};
    if (!event) co_return std::pair{event.error(), event.error().find("source error") != std::string::npos};
    if (std::holds_alternative<protocol::BinlogHeartbeatEvent>(event->body)) {
      q.caught_up = true;
      wake(s.data);
      continue;
    }
    auto txn = assembler.feed(*event);
    if (!txn) co_return std::pair{txn.error(), true};
    q.caught_up = false;
    if (!*txn) continue;
    if ((*txn)->skipped_rows) context.change_stats.maintenance_rows.fetch_add((*txn)->skipped_rows);
    if ((*txn)->gtid) q.read_to.advance(*(*txn)->gtid);
    q.rows += (*txn)->rows.size();
    q.transactions.push_back(std::move(**txn));
    wake(s.data);
    co_await waitForRoom(q, s);
    if (s.closed) co_return std::pair{std::string(), false};
  }
}

}  // namespace

std::optional<conf::BackendConfig> readerLogin(const ProxyContext& context, const std::string& backend,
                                               const std::string& source) {
  if (source == "replicas") {
    auto topology = context.topology.load();
    auto health = context.replica_health.load();
    if (topology && health) {
      for (auto& login : replicaLogins(context.config(), *topology, backend)) {
        const ServerHealth* h = health->find(login.name);
        if (h && servesReads(*h)) return replicationBackend(login);
      }
    }
  }
  auto primary = currentPrimary(context, backend);
  if (!primary) return std::nullopt;
  return replicationBackend(*primary);
}

awaitable<void> runReader(ReaderSetup setup, std::shared_ptr<ReaderQueue> queue,
                          std::shared_ptr<StreamSignals> signals) {
  auto& q = *queue;
  auto& s = *signals;
  auto& context = *setup.context;
  std::chrono::milliseconds retry = kRetryFirst;
  while (!s.closed) {
    auto login = readerLogin(context, q.backend, setup.config.source);
    if (!login) {
      q.fatal = fmt::format("backend {} is not in the configuration", q.backend);
      break;
    }
    q.server = login->name;
    BinlogStreamOptions options;
    options.heartbeat_period = std::chrono::milliseconds(setup.config.heartbeat_ms);
    options.read_timeout = std::max(std::chrono::milliseconds(10'000), 4 * options.heartbeat_period);
    options.gtid_connect_state = q.read_to.connectState();
    const protocol::BinlogPosition unused;  // by GTID; an lvalue (GCC 12 destroys coroutine temporaries twice)
    auto stream = co_await BinlogStream::open(*login, unused, setup.server_id, options);
    std::string error;
    bool fatal = false;
    if (stream) {
      ChangeAssembler assembler(q.backend, q.schema, *setup.tables, setup.config.max_transaction_events);
      std::tie(error, fatal) = co_await drain(**stream, assembler, q, s, context);
      (*stream)->close();
      if (error.empty()) break;  // closed
      retry = kRetryFirst;
    } else {
      error = stream.error();
    }
    if (fatal) {
      q.fatal = fmt::format("change stream reader of {}: {}", q.backend, error);
      break;
    }
    context.change_stats.reader_errors.fetch_add(1);
    spdlog::warn("change stream: reader of {} ({}): {}; reopening from {} in {} ms", q.backend, q.server, error,
                 q.read_to.connectState(), retry.count());
    q.caught_up = false;
    co_await sleepFor(retry);
    retry = std::min(retry * 2, kRetryMax);
  }
  if (!q.fatal.empty()) spdlog::warn("{}", q.fatal);
  wake(s.data);
}

}  // namespace sp::proxy::changes
