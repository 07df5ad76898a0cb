// Execution of a multi-row INSERT / REPLACE split per shard
// (routing::PlanKind::kMultiWrite, only under scatter.multi_shard_writes:
// best_effort). Semantics (docs/routing.md, "Split writes"):
// - Outside a transaction every part runs at once on its own backend
//   connection, each autocommitted. All connections are borrowed and brought
//   to the session's state before anything is sent, so a backend that cannot
//   be reached fails the statement with nothing written. When every part
//   succeeds the client gets one OK with the summed affected rows and
//   warnings; if any part fails the ERR names every failed shard with its
//   error, and every shard that succeeded with the rows it wrote: nothing is
//   rolled back.
// - Inside a transaction (or with autocommit off, or under LOCK TABLES) all
//   parts must live on the transaction's backend (else 9120, before anything
//   runs). They run one after the other on the session's connection between a
//   SAVEPOINT and its RELEASE; a failing part rolls the earlier parts back to
//   the savepoint, so the statement is all-or-nothing as on one server.
// LAST_INSERT_ID: the insert id of the first part that generated one, parts
// taken in the order of their first row (the first part holds the statement's
// first row), i.e. the id generated for the earliest row that got one.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/response_tracker.hpp"
#include "proxy/backend_pool.hpp"
#include "proxy/client_errors.hpp"
#include "proxy/client_session.hpp"
#include "proxy/global_defaults.hpp"
#include "proxy/pool_capacity.hpp"
#include "proxy/shard_read.hpp"
#include "proxy/worker.hpp"

namespace sp::proxy {

namespace status = protocol::status;
using protocol::Command;
using protocol::ResponseEvent;

namespace {

constexpr std::string_view kSavepoint = "SAVEPOINT shardproxy_split";
constexpr std::string_view kRollbackToSavepoint = "ROLLBACK TO SAVEPOINT shardproxy_split";
constexpr std::string_view kReleaseSavepoint = "RELEASE SAVEPOINT shardproxy_split";

struct WritePart {
  const routing::RouteTarget* target = nullptr;
  BackendPool* pool = nullptr;
  std::unique_ptr<BackendConnection> conn;
  std::optional<protocol::OkPacket> ok;
  std::optional<protocol::ErrPacket> server_error;
  std::string failure;  // connection-level failure after sending: the outcome is unknown
};

std::string partLabel(const routing::RouteTarget& t) {
  return fmt::format("shard {} ({} on backend {})", t.shard, t.physical_table, t.backend);
}

std::string rowsText(uint64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); }

std::string_view verbOf(const parser::StatementInfo& info) {
  return info.kind == parser::StatementKind::kReplace ? "REPLACE" : "INSERT";
}

// One part's answer: a single OK or ERR (an INSERT sends no result set).
awaitable<void> readPartAnswer(WritePart& part, std::chrono::milliseconds timeout) {
  protocol::ResponseTracker tracker(protocol::ResponseKind::kQuery, part.conn->capabilities(),
                                    part.conn->mariadbCapabilities());
  while (!tracker.done()) {
    auto msg = co_await readShard(*part.conn, timeout, part.pool->config());
    if (!msg) {
      part.failure = msg.error() == ShardReadError::kTimeout
                         ? fmt::format("no answer within {} ms (scatter.shard_timeout_ms); its connection was "
                                       "closed and the part may or may not have been applied",
                                       timeout.count())
                         : std::string("connection lost; the part may or may not have been applied");
      co_return;
    }
    auto ev = tracker.onPacket(msg->payload);
    if (!ev) {
      part.conn->markBroken();
      part.failure = "malformed response; the part may or may not have been applied";
      co_return;
    }
    if (*ev == ResponseEvent::kErr) {
      auto err = protocol::decodeErrPacket(msg->payload);
      part.server_error = err ? *err : protocol::ErrPacket{1105, "HY000", "error"};
    }
  }
  if (part.server_error) co_return;
  protocol::OkPacket ok;
  ok.status_flags = tracker.statusFlags();
  ok.affected_rows = tracker.affectedRows();
  ok.last_insert_id = tracker.lastInsertId();
  ok.warnings = tracker.warnings();
  part.ok = ok;
}

void releaseParts(std::vector<WritePart>& parts) {
  for (auto& p : parts) {
    if (!p.conn) continue;
    bool answered = p.ok || p.server_error;
    bool open_transaction = p.ok && (p.ok->status_flags & status::kInTrans);
    if (!answered || open_transaction) p.conn->markBroken();
    p.pool->release(std::move(p.conn));
  }
}

// The ERR for a split write with failed parts: every failure, every success.
protocol::ErrPacket partialFailure(const std::vector<WritePart>& parts, std::string_view verb) {
  std::string failed, succeeded;
  size_t failures = 0;
  for (const auto& p : parts) {
    if (p.ok) {
      succeeded += fmt::format("{}{}: {}", succeeded.empty() ? "" : "; ", partLabel(*p.target),
                               rowsText(p.ok->affected_rows));
      continue;
    }
    ++failures;
    std::string why = p.server_error ? fmt::format("ERROR {} ({}): {}", p.server_error->error_code,
                                                   p.server_error->sql_state, p.server_error->message)
                                     : p.failure;
    failed += fmt::format("{}{}: {}", failed.empty() ? "" : "; ", partLabel(*p.target), why);
  }
  std::string message = fmt::format("shardproxy: {} split over {} shards: {} of them failed; nothing was rolled back. "
                                    "Failed: {}. Succeeded: {}.",
                                    verb, parts.size(), failures, failed, succeeded.empty() ? "none" : succeeded);
  // Nothing written and one server error everywhere: that error, as one server would send it.
  bool unknown = false;
  for (const auto& p : parts) unknown |= !p.ok && !p.server_error;
  const auto& first = parts.front().server_error;
  bool same_error = succeeded.empty() && !unknown && first;
  for (const auto& p : parts) same_error = same_error && p.server_error && p.server_error->error_code == first->error_code;
  if (same_error) return protocol::ErrPacket{first->error_code, first->sql_state, message};
  return client_error::make(client_error::kSplitWritePartial, message);
}

// Inside a transaction every part must be on `pool`, the transaction's backend.
std::optional<protocol::ErrPacket> crossBackendError(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                                     const BackendPool& pool, bool pinned,
                                                     const parser::StatementInfo& info) {
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pools[i] == &pool) continue;
    std::string bound = pinned ? fmt::format("the transaction is bound to backend {}", pool.name())
                               : fmt::format("its first rows go to backend {}", pool.name());
    return client_error::make(client_error::kCrossBackend, fmt::format(
        "shardproxy: this {} inside a transaction has rows for {}, but {}; transactions spanning backends are not "
        "supported, so nothing was written: insert each backend's rows in its own transaction, or outside a "
        "transaction", verbOf(info), partLabel(plan.targets[i]), bound));
  }
  return std::nullopt;
}

protocol::OkPacket summedOk(const std::vector<protocol::OkPacket>& oks) {
  protocol::OkPacket sum;
  uint32_t warnings = 0;
  for (const auto& ok : oks) {
    sum.affected_rows += ok.affected_rows;
    warnings += ok.warnings;
    if (sum.last_insert_id == 0) sum.last_insert_id = ok.last_insert_id;
  }
  sum.warnings = static_cast<uint16_t>(std::min<uint32_t>(warnings, 0xffff));
  return sum;
}

}  // namespace

awaitable<bool> ClientSession::runMultiWrite(const routing::Plan& plan, const parser::StatementInfo& info) {
  diagnostics_.onSuccess(0);  // the parts' warnings stay on their connections
  std::vector<BackendPool*> pools;
  for (const auto& t : plan.targets) {
    BackendPool* pool = worker_.pool(t.backend);
    if (!pool) {
      queueError(reply_seq_, client_error::make(client_error::kGeneric, "shardproxy: shard map names unknown backend " + t.backend));
      co_return co_await client_.flush();
    }
    pools.push_back(pool);
  }
  bool transactional = txn_.transactional() || tables_locked_;
  if (transactional) co_return co_await runMultiWriteOnOne(plan, pools, info);
  co_return co_await runMultiWriteParallel(plan, pools, info);
}

awaitable<bool> ClientSession::runMultiWriteParallel(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                                     const parser::StatementInfo& info) {
  if (auto shortfall = poolShortfall(worker_, plan.targets)) {
    queueError(reply_seq_, *shortfall);
    co_return co_await client_.flush();
  }
  std::vector<WritePart> parts(plan.targets.size());
  // 1. Every connection borrowed and in the session's state before anything
  // is sent, one multi-shard statement at a time per worker (async_gate.hpp).
  AsyncGate::Pass gate_pass = co_await worker_.multiShardGate().enter();
  for (size_t i = 0; i < parts.size(); ++i) {
    auto& part = parts[i];
    part.target = &plan.targets[i];
    part.pool = pools[i];
    auto ready = co_await preparePartConnection(*part.pool, info);
    if (!ready) {
      queueError(reply_seq_, client_error::make(client_error::kBackendUnavailable, fmt::format(
          "shardproxy: {} split over {} shards not run (nothing was written): {}: {}", verbOf(info), parts.size(),
          partLabel(*part.target), ready.error())));
      releaseParts(parts);
      co_return co_await client_.flush();
    }
    part.conn = std::move(*ready);
  }
  gate_pass.release();
  // 2. All parts in flight at once.
  for (auto& part : parts) {
    protocol::Bytes payload;
    payload.reserve(part.target->sql.size() + 1);
    payload.push_back(static_cast<uint8_t>(Command::kQuery));
    payload.insert(payload.end(), part.target->sql.begin(), part.target->sql.end());
    part.conn->stream().append(payload, 0);
  }
  for (auto& part : parts) {
    if (!co_await part.conn->stream().flush()) part.conn->markBroken();
  }
  // 3. Answers.
  std::chrono::milliseconds timeout(worker_.context().config.scatter.shard_timeout_ms);
  std::vector<protocol::OkPacket> oks;
  for (auto& part : parts) {
    co_await readPartAnswer(part, timeout);
    if (part.ok) oks.push_back(*part.ok);
  }
  releaseParts(parts);
  if (oks.size() != parts.size()) {
    auto err = partialFailure(parts, verbOf(info));
    spdlog::warn("session {}: {}", connection_id_, err.message);
    queueError(reply_seq_, err);
    co_return co_await client_.flush();
  }
  auto sum = summedOk(oks);
  co_return co_await sendWriteOk(sum);
}

awaitable<bool> ClientSession::runMultiWriteOnOne(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                                  const parser::StatementInfo& info) {
  BackendPool* pool = pinned_pool_ ? pinned_pool_ : pools.front();
  if (auto err = crossBackendError(plan, pools, *pool, pinned_pool_ != nullptr, info)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  auto conn = co_await borrowFor(*pool);
  if (!conn) co_return true;
  // A real transaction gets statement atomicity from a savepoint; under LOCK
  // TABLES with autocommit on each part commits by itself (best effort).
  const bool atomic = txn_.transactional();
  std::vector<std::string> preamble;
  if (txn_.pendingBegin()) preamble.push_back(*txn_.pendingBegin());
  txn_.clearPendingBegin();
  if (auto restore = info.uses_last_insert_id ? last_insert_id_.restoreFor(conn->loan()) : std::nullopt) {
    preamble.push_back(std::move(*restore));
  }
  if (atomic) preamble.emplace_back(kSavepoint);
  for (const auto& sql : preamble) {
    auto r = co_await conn->command(Command::kQuery, sql);
    if (r) {
      txn_.onServerStatus(r->status_flags);  // from BEGIN on, the transaction lives on this connection
      continue;
    }
    if (r.error().kind == BackendError::Kind::kServer) queueError(reply_seq_, r.error().toErrPacket());
    else reportBackendFailure(*pool, reply_seq_, false);
    giveBack(std::move(conn), *pool, std::nullopt);
    co_return co_await client_.flush();
  }
  std::vector<WritePart> parts(plan.targets.size());
  std::vector<protocol::OkPacket> oks;
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i].target = &plan.targets[i];
    parts[i].pool = pool;
    auto r = co_await conn->command(Command::kQuery, plan.targets[i].sql);
    if (r) {
      parts[i].ok = *r;
      oks.push_back(*r);
    } else if (r.error().kind == BackendError::Kind::kServer) {
      parts[i].server_error = r.error().toErrPacket();
      if (atomic) break;
    } else {
      reportBackendFailure(*pool, reply_seq_, true);
      giveBack(std::move(conn), *pool, std::nullopt);
      co_return co_await client_.flush();
    }
  }
  if (oks.size() == parts.size()) {
    uint16_t flags = oks.back().status_flags;
    if (atomic) {
      auto released = co_await conn->command(Command::kQuery, kReleaseSavepoint);
      if (released) flags = released->status_flags;
    }
    recordEffects(info, *conn, {}, false);
    giveBack(std::move(conn), *pool, flags);
    auto sum = summedOk(oks);
    co_return co_await sendWriteOk(sum);
  }
  if (!atomic) {
    std::optional<uint16_t> flags;
    if (!oks.empty()) flags = oks.back().status_flags;
    giveBack(std::move(conn), *pool, flags);
    queueError(reply_seq_, partialFailure(parts, verbOf(info)));
    co_return co_await client_.flush();
  }
  const WritePart& failed = parts[oks.size()];  // atomic: the parts stop at the first failure
  co_return co_await undoSplitWrite(std::move(conn), *pool, *failed.target, *failed.server_error);
}

// Inside a transaction a part failed: roll the statement's earlier parts back
// to the savepoint (the transaction stays open, as after any failed
// statement) and answer with that part's error.
awaitable<bool> ClientSession::undoSplitWrite(std::unique_ptr<BackendConnection> conn, BackendPool& pool,
                                              const routing::RouteTarget& target, const protocol::ErrPacket& error) {
  auto undone = co_await conn->command(Command::kQuery, kRollbackToSavepoint);
  if (undone) co_await conn->command(Command::kQuery, kReleaseSavepoint);
  std::optional<uint16_t> flags = conn->status();
  // The server already ended the transaction (deadlock, rollback on timeout): no savepoint left.
  if (!undone && undone.error().kind == BackendError::Kind::kServer) *flags &= ~status::kInTrans;
  if (conn->broken()) flags.reset();
  giveBack(std::move(conn), pool, flags);
  std::string note = undone ? "; the statement's parts on other shards were rolled back (to a savepoint), the "
                              "transaction is still open"
                            : "";
  protocol::ErrPacket err{error.error_code, error.sql_state,
                          fmt::format("shardproxy: {}: {}{}", partLabel(target), error.message, note)};
  queueError(reply_seq_, err);
  co_return co_await client_.flush();
}

awaitable<std::expected<std::unique_ptr<BackendConnection>, std::string>> ClientSession::preparePartConnection(
    BackendPool& pool, const parser::StatementInfo& info) {
  auto r = co_await pool.acquire(poolFlavour(), connection_id_);
  if (!r) co_return std::unexpected(fmt::format("backend unavailable: {}", r.error().message));
  auto conn = std::move(*r);
  if (!co_await refreshGlobalDefaults(*conn, globals_epoch_)) {
    pool.release(std::move(conn));
    co_return std::unexpected(std::string("cannot reset the connection to the global defaults"));
  }
  auto synced = co_await conn->sync(desired_);
  if (synced && info.uses_last_insert_id) {
    std::string restore = "SELECT LAST_INSERT_ID(" + std::to_string(last_insert_id_.value()) + ")";
    auto restored = co_await conn->command(Command::kQuery, restore);
    if (!restored) synced = std::unexpected(restored.error());
  }
  if (!synced) {
    std::string why = synced.error().message;
    conn->markBroken();
    pool.release(std::move(conn));
    co_return std::unexpected(fmt::format("cannot prepare the connection: {}", why));
  }
  co_return conn;
}

awaitable<bool> ClientSession::sendWriteOk(const protocol::OkPacket& sum) {
  protocol::OkPacket ok = sum;
  if (ok.last_insert_id != 0) last_insert_id_.adopt(ok.last_insert_id);
  ok.status_flags = statusFlags();
  protocol::Bytes out;
  protocol::encode(ok, capabilities_, out);
  client_.append(out, reply_seq_);
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
