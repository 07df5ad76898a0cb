// A ClientSession's INSERT / REPLACE split per shard (routing::PlanKind::kMultiWrite,
// only under scatter.multi_shard_writes: best_effort; docs/routing.md, "Split
// writes"). The session decides the form and lends the connections; the
// split-write execution (split_write_execution.hpp) runs the parts:
// - outside a transaction every part runs at once on its own backend
//   connection, each autocommitted. All connections are borrowed and brought
//   to the session's state before anything is sent, so a backend that cannot
//   be reached fails the statement with nothing written;
// - inside a transaction (or with autocommit off, or under LOCK TABLES) all
//   parts must live on the transaction's backend (else 9120, before anything
//   runs). They run one after the other on the session's connection between a
//   SAVEPOINT and its RELEASE.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/backend_shard_channel.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/session/pool_capacity.hpp"
#include "proxy/exec/split_write_execution.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

using protocol::Command;

namespace {

std::string_view verbOf(const parser::StatementInfo& info) {
  return info.kind == parser::StatementKind::kReplace ? "REPLACE" : "INSERT";
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
        "transaction", verbOf(info), splitPartLabel(plan.targets[i]), bound));
  }
  return std::nullopt;
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
    // Its parts' GTIDs are not read back: read that backend on its primary
    // until a later write reports one (read_your_writes.hpp).
    if (!pool->config().replicas.empty()) read_your_writes_.markPending(pool->name());
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
  // A slot of each server's budget (session_admission.cpp) before any connection.
  auto slots = co_await admitAll(pools);
  if (!slots) co_return co_await client_.flush();
  const std::chrono::milliseconds timeout(worker_.context().config().scatter.shard_timeout_ms);
  std::vector<LentShard> lent(plan.targets.size());
  // Every connection borrowed and in the session's state before anything
  // is sent, one multi-shard statement at a time per worker (async_gate.hpp).
  AsyncGate::Pass gate_pass = co_await worker_.multiShardGate().enter();
  for (size_t i = 0; i < lent.size(); ++i) {
    auto ready = co_await preparePartConnection(*pools[i], info);
    if (!ready) {
      queueError(reply_seq_, client_error::make(client_error::kBackendUnavailable, fmt::format(
          "shardproxy: {} split over {} shards not run (nothing was written): {}: {}", verbOf(info), lent.size(),
          splitPartLabel(plan.targets[i]), ready.error())));
      releaseLent(lent);
      co_return co_await client_.flush();
    }
    lent[i].lend(*pools[i], std::move(*ready), timeout);
  }
  gate_pass.release();
  std::vector<WritePart> parts;
  parts.reserve(lent.size());
  for (size_t i = 0; i < lent.size(); ++i) parts.push_back({&plan.targets[i], lent[i].channel.get(), {}});
  auto result = co_await executeSplitWrite(parts, verbOf(info), timeout);
  releaseLent(lent);
  if (!result) {
    spdlog::warn("session {}: {}", connection_id_, result.error().message);
    queueError(reply_seq_, result.error());
    co_return co_await client_.flush();
  }
  co_return co_await sendWriteOk(*result);
}

awaitable<bool> ClientSession::runMultiWriteOnOne(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                                  const parser::StatementInfo& info) {
  BackendPool* pool = pinned_pool_ ? pinned_pool_ : pools.front();
  if (auto err = crossBackendError(plan, pools, *pool, pinned_pool_ != nullptr, info)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  const std::vector<BackendPool*> server{pool};
  auto slots = co_await admitAll(server);
  if (!slots) co_return co_await client_.flush();
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
  if (atomic) preamble.emplace_back(kSplitSavepoint);
  for (const auto& sql : preamble) {
    auto r = co_await conn->command(Command::kQuery, sql);
    if (r) {
      txn_.onServerStatus(r->status_flags);  // from BEGIN on, the transaction lives on this connection
      continue;
    }
    queuePreparationFailure(*pool, r.error());
    giveBack(std::move(conn), *pool, std::nullopt);
    co_return co_await client_.flush();
  }
  BackendShardChannel channel(*conn, pool->config());
  auto out = co_await executeSplitWriteOnOne(channel, plan.targets, atomic, verbOf(info), conn->status());
  if (out.lost) {
    reportBackendFailure(*pool, reply_seq_, true);
    giveBack(std::move(conn), *pool, std::nullopt);
    co_return co_await client_.flush();
  }
  if (out.result) recordEffects(info, *conn, {}, false);
  giveBack(std::move(conn), *pool, out.status_flags);
  if (out.result) co_return co_await sendWriteOk(*out.result);
  queueError(reply_seq_, out.result.error());
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
