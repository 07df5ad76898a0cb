// Lending backend connections to a client session: borrowing (the pinned
// connection, or one from the pool brought to the session's state), giving
// back (pinning while a transaction or connection-bound state lives on it,
// noting a lost transaction), and what a response says about the
// connection's state afterwards (status flags, the diagnostics area).
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "protocol/constants.hpp"
#include "proxy/observe/abuse_log.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

using protocol::Command;
namespace status = protocol::status;

awaitable<std::unique_ptr<BackendConnection>> ClientSession::borrowPooled(BackendPool& pool) {
  auto r = co_await pool.acquire(poolFlavour(), connection_id_, last_insert_id_.preferredConnection());
  if (!r) {
    const auto& cfg = pool.config();
    const auto kind = r.error().kind;
    queueError(reply_seq_, client_error::make(
        kind == BackendError::Kind::kPoolTimeout ? client_error::kGeneric
        : kind == BackendError::Kind::kSwitching ? client_error::kPrimarySwitching
                                                 : client_error::kBackendUnavailable,
        fmt::format("shardproxy: backend {} ({}:{}) unavailable: {}", cfg.name, cfg.address.host,
                    cfg.address.port, r.error().message)));
    co_await client_.flush();
    co_return nullptr;
  }
  auto conn = std::move(*r);
  last_insert_id_.onBorrow(conn->loan());
  if (!co_await refreshGlobalDefaults(*conn, globals_epoch_)) {
    reportBackendFailure(pool, reply_seq_, false);
    co_await client_.flush();
    pool.release(std::move(conn));
    co_return nullptr;
  }
  co_return conn;
}

awaitable<std::unique_ptr<BackendConnection>> ClientSession::borrow(BackendPool& pool, bool sync_state) {
  std::unique_ptr<BackendConnection> conn;
  if (pinned_) {
    conn = std::move(pinned_);
  } else {
    conn = co_await borrowPooled(pool);
    if (!conn) co_return nullptr;
  }
  if (sync_state && !conn->inSync(desired_)) {
    auto s = co_await conn->sync(desired_);
    if (!s) {
      queuePreparationFailure(pool, s.error());
      co_await client_.flush();
      giveBack(std::move(conn), pool, std::nullopt);
      co_return nullptr;
    }
  }
  co_return conn;
}

void ClientSession::queuePreparationFailure(const BackendPool& pool, const BackendError& error) {
  if (error.kind == BackendError::Kind::kServer) queueError(reply_seq_, error.toErrPacket());
  else reportBackendFailure(pool, reply_seq_, false);
}

void ClientSession::giveBack(std::unique_ptr<BackendConnection> conn, BackendPool& pool,
                             std::optional<uint16_t> server_status) {
  if (!conn) return;
  if (xa_ && keepBranch(conn, pool, server_status)) return;  // a branch of the global transaction (session_xa.cpp)
  const bool first_branch = xa_ && &pool == xa_->first;
  // A sticky connection on another backend stays pinned as it is; route()
  // refuses statements that would open a transaction or sticky state here.
  const bool other_pinned = pinned_ != nullptr;
  if (conn->broken()) {
    if (!other_pinned) {
      if (txn_.inTransaction() || bound_.any() || tables_locked_) {
        spdlog::info("session {}: pinned backend connection to {} lost{}", connection_id_, pool.name(),
                     txn_.inTransaction() ? " inside a transaction: refusing statements until ROLLBACK" : "");
      }
      txn_.onConnectionLost();
      if (first_branch) xa_->aborted = true;
      bound_.clear();
      tables_locked_ = false;
      pinned_pool_ = nullptr;
    }
    pool.release(std::move(conn));
  } else if (other_pinned) {
    if (server_status && (*server_status & status::kInTrans)) conn->markBroken();  // never pool an open transaction
    pool.release(std::move(conn));
  } else {
    if (server_status) txn_.onServerStatus(*server_status);
    // The first branch stays pinned until the global transaction ends, even
    // when the server ended it (a deadlock): abortGlobal() rolls it back.
    if (first_branch && server_status && !(*server_status & status::kInTrans)) xa_->aborted = true;
    if (txn_.inTransaction() || bound_.any() || tables_locked_ || first_branch) {
      pinned_ = std::move(conn);
      pinned_pool_ = &pool;
    } else {
      pinned_pool_ = nullptr;
      pool.release(std::move(conn));
    }
  }
  syncPinSlot();
  const bool counted = inTransaction();
  if (!counted) transaction_map_.reset();
  if (counted != counted_in_transaction_) {
    worker_.context().sessions_in_transaction.fetch_add(counted ? 1 : uint32_t(-1));
    counted_in_transaction_ = counted;
  }
}

awaitable<void> ClientSession::recordDiagnostics(const ForwardResult& result, const parser::StatementInfo& info,
                                                  BackendConnection& conn) {
  if (result.server_error) {
    if (result.error) diagnostics_.onError(*result.error);
    // The area may hold more than the error (a procedure's "At line 4 in
    // f1" note before it): read it whole while the connection is ours.
    auto rows = co_await conn.queryRows("SHOW WARNINGS");
    if (rows && !rows->empty()) diagnostics_.setConditions(*rows);
    co_return;
  }
  using K = parser::StatementKind;
  const bool table_less_kind = info.kind == K::kSelect || info.kind == K::kSet || info.kind == K::kDo;
  const bool resets = !table_less_kind || info.names_table || info.multiple_statements;
  if (!diagnostics_.onSuccess(result.warnings, resets)) co_return;
  // Read them now, on the connection that has them, before it goes back to the pool.
  auto rows = co_await conn.queryRows("SHOW WARNINGS");
  if (rows) diagnostics_.setConditions(*rows);
}

awaitable<std::optional<uint16_t>> ClientSession::statusAfter(const ForwardResult& result, BackendConnection& conn) {
  if (!result.server_error) co_return result.status_flags;
  // An ERR carries no status flags. Outside any transaction nothing changed;
  // inside one the server may have kept it (a duplicate key) or rolled it
  // back (a deadlock): the OK of an empty statement tells which, so a
  // transaction is never handed to the pool nor kept after the server ended
  // it. (COM_PING will not do: MariaDB 10.11 still answers it with IN_TRANS
  // after a deadlock rolled the transaction back; a statement refreshes it.)
  if (!txn_.transactional() && !(result.status_flags & status::kInTrans)) co_return std::nullopt;
  auto probe = co_await conn.command(Command::kQuery, "DO 0");
  if (!probe) co_return std::nullopt;  // broken: giveBack() sees it
  co_return probe->status_flags;
}

awaitable<std::unique_ptr<BackendConnection>> ClientSession::borrowFor(BackendPool& pool) {
  if (pinned_pool_ == &pool) co_return co_await borrow(pool, true);
  // A sticky connection on another backend stays put; this statement borrows on its own.
  auto keep = std::move(pinned_);
  auto* keep_pool = pinned_pool_;
  pinned_pool_ = nullptr;
  auto conn = co_await borrow(pool, true);
  pinned_ = std::move(keep);
  pinned_pool_ = keep_pool;
  co_return conn;
}

awaitable<void> ClientSession::releasePinned() {
  if (xa_) co_await abortGlobal();
  if (!pinned_) co_return;
  BackendPool& pool = *pinned_pool_;
  auto conn = std::move(pinned_);
  // Roll back and clear whatever the session left on the connection before reuse.
  const bool reset = co_await conn->resetSession();
  bound_.clear();
  tables_locked_ = false;
  if (reset) txn_.onServerStatus(conn->status());
  else txn_.onConnectionLost();
  giveBack(std::move(conn), pool, std::nullopt);
}

namespace {

// Statements that end or change session state without opening a
// transaction, even under autocommit=0 (so `SET autocommit = 1` and COMMIT
// are never refused for the pin they would not take).
bool opensNoTransaction(parser::StatementKind kind) {
  using K = parser::StatementKind;
  switch (kind) {
    case K::kEmpty:
    case K::kSet:
    case K::kUse:
    case K::kCommit:
    case K::kRollback:
    case K::kSavepoint:
    case K::kUnlockTables:
    case K::kXa:
      return true;
    default:
      return false;
  }
}

// What makes giveBack() keep the connection for the session, known before
// the statement runs: a transaction (open, deferred or implicit under
// autocommit=0, or begun by this statement) and connection-bound state.
bool willPin(const parser::StatementInfo& info, const TransactionState& txn) {
  using K = parser::StatementKind;
  return (txn.transactional() && !opensNoTransaction(info.kind)) || info.kind == K::kBegin ||
         info.kind == K::kLockTables || info.kind == K::kPrepareSql || info.uses_user_variable ||
         info.creates_temporary_table || info.uses_named_lock || info.uses_found_rows || info.multiple_statements;
}

}  // namespace

std::optional<protocol::ErrPacket> ClientSession::reservePin(const parser::StatementInfo& info) {
  if (pinned_ || pin_slot_ || !willPin(info, txn_)) return std::nullopt;
  auto& ctx = worker_.context();
  const uint32_t limit = ctx.config().pinnedConnectionLimit(user_);
  if (auto slot = ctx.pinned_by_user.tryAcquire(user_, limit)) {
    pin_slot_.emplace(std::move(*slot));
    return std::nullopt;
  }
  ctx.refused_pinned.fetch_add(1, std::memory_order_relaxed);
  noteAbuse(AbuseKind::kPinnedPerUser, fmt::format("user {} holds {} pinned connections", user_, limit));
  // MariaDB's wording for a per-account resource (max_queries_per_hour, ...).
  return client_error::make(client_error::kUserLimitReached,
                            fmt::format("User '{}' has exceeded the 'max_pinned_connections' resource (current value: {})",
                                        user_, limit));
}

void ClientSession::syncPinSlot() {
  const bool holds = pinned_ != nullptr || txn_.pendingBegin().has_value();
  if (!holds) {
    pin_slot_.reset();
  } else if (!pin_slot_ && !user_.empty()) {
    // Unforeseen (limit 0 never refuses): counted even over the limit.
    if (auto slot = worker_.context().pinned_by_user.tryAcquire(user_, 0)) pin_slot_.emplace(std::move(*slot));
  }
}

}  // namespace sp::proxy
