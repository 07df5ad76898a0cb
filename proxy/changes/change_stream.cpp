#include "proxy/changes/change_stream.hpp"

#include <fmt/format.h>

#include "conf/config.hpp"

#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy::changes {

namespace {

// A backend's position now (@@gtid_binlog_pos): "from now" starts there.
awaitable<std::expected<BackendGtids, std::string>> positionNow(const conf::BackendConfig& login) {
  auto conn = co_await BackendConnection::open(login, kNoDatabase, 1 << 20);
  if (!conn) co_return std::unexpected(fmt::format("backend {}: {}", login.name, conn.error().message));
  auto rows = co_await (*conn)->queryRows("SELECT @@global.gtid_binlog_pos");
  (*conn)->stream().close();
  if (!rows || rows->size() != 1 || rows->front().size() != 1) {
    co_return std::unexpected(fmt::format("backend {}: cannot read @@gtid_binlog_pos", login.name));
  }
  auto gtids = parseGtidList(rows->front()[0].value_or(""));
  if (!gtids) co_return std::unexpected(fmt::format("backend {}: @@gtid_binlog_pos: {}", login.name, gtids.error()));
  co_return std::move(*gtids);
}

std::expected<std::shared_ptr<const ChangeTables>, std::string> resolveTables(const ProxyContext& context,
                                                                              std::vector<std::string> tables) {
  const auto& configured = context.config().changes.tables;
  if (tables.empty()) tables = configured;
  for (const auto& t : tables) {
    if (!configured.empty() && std::find(configured.begin(), configured.end(), t) == configured.end()) {
      return std::unexpected(fmt::format("table {} is not streamed (changes.tables)", t));
    }
  }
  auto map = context.shard_map.load();
  if (!map) return std::unexpected(std::string("no shard map in force"));
  auto resolved = std::make_shared<const ChangeTables>(*map, tables);
  if (!resolved->unknown().empty()) {
    return std::unexpected(fmt::format("table {} is not a sharded table of the map", resolved->unknown().front()));
  }
  if (resolved->empty()) return std::unexpected(std::string("no sharded table to stream"));
  return resolved;
}

}  // namespace

ChangeStream::ChangeStream(ProxyContext& context, std::shared_ptr<StreamSignals> signals)
    : context_(context), signals_(std::move(signals)), refilled_(std::chrono::steady_clock::now()) {}

ChangeStream::~ChangeStream() { close(); }

void ChangeStream::close() {
  if (signals_->closed) return;
  signals_->closed = true;
  signals_->data.cancel();
  signals_->space.cancel();
}

awaitable<std::expected<std::unique_ptr<ChangeStream>, std::string>> ChangeStream::open(ProxyContext& context,
                                                                                        const StreamRequest& request_ref,
                                                                                        uint32_t consumer) {
  const StreamRequest request = request_ref;
  auto tables = resolveTables(context, request.tables);
  if (!tables) co_return std::unexpected(tables.error());
  const auto& config = context.config();
  if (request.from) {
    for (const auto& [name, gtids] : request.from->backends) {
      if (!config.findBackend(name)) co_return std::unexpected(fmt::format("position names backend {}, which is not in the configuration", name));
    }
  }
  auto ex = co_await asio::this_coro::executor;
  auto signals = std::make_shared<StreamSignals>(ex);
  auto stream = std::make_unique<ChangeStream>(context, signals);
  stream->rate_ = config.changes.max_events_per_second;
  const size_t per_backend = std::max<size_t>(1, config.changes.buffer_events / std::max<size_t>(1, config.backends.size()));
  for (const auto& backend : config.backends) {
    auto q = std::make_shared<ReaderQueue>();
    q->backend = backend.name;
    q->schema = backend.database;
    q->capacity = per_backend;
    if (request.from && request.from->backends.contains(backend.name)) {
      q->read_to = request.from->backends.at(backend.name);
    } else {
      auto login = readerLogin(context, backend.name, config.changes.source);
      if (!login) co_return std::unexpected(fmt::format("backend {} has no server to read", backend.name));
      auto now = co_await positionNow(*login);
      if (!now) co_return std::unexpected(now.error());
      q->read_to = std::move(*now);
    }
    stream->emitted_.backends[backend.name] = q->read_to;
    stream->queues_.push_back(q);
  }
  ReaderSetup setup{&context, config.changes, *tables, config.changes.replica_server_id + consumer};
  for (auto& q : stream->queues_) asio::co_spawn(ex, runReader(setup, q, signals), asio::detached);
  co_return stream;
}

ReaderQueue* ChangeStream::pick() {
  ReaderQueue* best = nullptr;
  for (auto& q : queues_) {
    if (q->transactions.empty()) continue;
    const auto& head = q->transactions.front();
    if (head.wait_for && !waitIsOver(*head.wait_for, emitted_)) continue;
    if (!best || head.timestamp < best->transactions.front().timestamp) best = q.get();
  }
  return best;
}

bool ChangeStream::caughtUp() const {
  return std::all_of(queues_.begin(), queues_.end(),
                     [](const auto& q) { return q->transactions.empty() && q->caught_up; });
}

awaitable<std::expected<std::optional<ChangeTransaction>, std::string>> ChangeStream::next(
    std::chrono::milliseconds idle) {
  const auto deadline = std::chrono::steady_clock::now() + idle;
  for (;;) {
    for (auto& q : queues_) {
      if (!q->fatal.empty()) co_return std::unexpected(q->fatal);
    }
    while (ReaderQueue* q = pick()) {
      ChangeTransaction txn = std::move(q->transactions.front());
      q->transactions.pop_front();
      q->rows -= txn.rows.size();
      signals_->space.cancel();
      if (txn.gtid) emitted_.backends[q->backend].advance(*txn.gtid);
      if (txn.rows.empty()) continue;  // other tables, maintenance, a mark: only the position moves
      if (rate_) {
        // Token bucket: up to one second of events in a burst.
        auto now = std::chrono::steady_clock::now();
        tokens_ = std::min<double>(rate_, tokens_ + rate_ * std::chrono::duration<double>(now - refilled_).count());
        refilled_ = now;
        tokens_ -= static_cast<double>(txn.rows.size());
        if (tokens_ < 0) {
          asio::steady_timer t(co_await asio::this_coro::executor);
          t.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(-tokens_ / rate_)));
          co_await t.async_wait(kNoThrow);
        }
      }
      co_return std::optional<ChangeTransaction>(std::move(txn));
    }
    if (signals_->closed) co_return std::unexpected(std::string("the change stream is closed"));
    if (std::chrono::steady_clock::now() >= deadline) co_return std::optional<ChangeTransaction>();
    signals_->data.expires_at(deadline);
    co_await signals_->data.async_wait(kNoThrow);
  }
}

}  // namespace sp::proxy::changes
