// A ClientSession's transaction over several backends (client_session.hpp,
// "session_xa.cpp"; docs/routing.md, "Transactions across backends"): the
// XA START that opens it, the branches that join it, and its end through
// proxy/exec/xa_commit.hpp.
#include <spdlog/spdlog.h>


#include "conf/config.hpp"
#include "parser/implicit_commit.hpp"
#include "parser/transaction_control.hpp"
#include "protocol/constants.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/xa_branches.hpp"
#include "proxy/exec/xa_commit.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

std::string ClientSession::beginStatement(const BackendPool& pool, std::optional<std::string>& gtrid) {
  const std::string& begin = *txn_.pendingBegin();
  const auto& cfg = worker_.context().config().transactions;
  if (cfg.cross_backend != conf::CrossBackend::kAtomic || !parser::isPlainBegin(begin)) return begin;
  gtrid = worker_.context().xa.start(connection_id_);
  return "XA START " + xaIdSql(*gtrid, pool.name());
}

awaitable<std::unique_ptr<BackendConnection>> ClientSession::borrowBranch(BackendPool& pool) {
  for (auto& b : xa_->others) {
    if (b.pool != &pool || !b.conn) continue;
    auto conn = std::move(b.conn);
    b.lent = true;
    if (!conn->inSync(desired_)) {
      if (auto s = co_await conn->sync(desired_); !s) {
        queuePreparationFailure(pool, s.error());
        co_await client_.flush();
        giveBack(std::move(conn), pool, std::nullopt);
        co_return nullptr;
      }
    }
    co_return conn;
  }
  // A new branch: a pooled connection brought to the session's state, then XA START.
  auto conn = co_await borrowPooled(pool);
  if (!conn) co_return nullptr;
  std::expected<void, BackendError> ready;
  if (!conn->inSync(desired_)) ready = co_await conn->sync(desired_);
  if (ready) {
    const std::string start = "XA START " + xaIdSql(xa_->gtrid, pool.name());
    auto r = co_await conn->command(protocol::Command::kQuery, start);
    if (!r) ready = std::unexpected(r.error());
  }
  if (!ready) {
    queuePreparationFailure(pool, ready.error());
    co_await client_.flush();
    pool.release(std::move(conn));
    co_return nullptr;
  }
  xa_->others.push_back(XaBranch{&pool, nullptr, true});
  worker_.context().xa.setBranches(xa_->gtrid, static_cast<uint32_t>(xa_->others.size() + 1));
  co_return conn;
}

bool ClientSession::keepBranch(std::unique_ptr<BackendConnection>& conn, BackendPool& pool,
                               std::optional<uint16_t> server_status) {
  for (auto& b : xa_->others) {
    if (b.pool != &pool || !b.lent) continue;
    b.lent = false;
    if (conn->broken()) {
      spdlog::info("session {}: branch of global transaction {} on {} lost: rolling back every branch",
                   connection_id_, xa_->gtrid, pool.name());
      txn_.onConnectionLost();
      xa_->aborted = true;
      pool.release(std::move(conn));
    } else {
      if (server_status && !(*server_status & protocol::status::kInTrans)) xa_->aborted = true;  // the server ended it
      b.conn = std::move(conn);
    }
    return true;
  }
  return false;
}

std::optional<protocol::ErrPacket> ClientSession::globalRefusal(const parser::StatementInfo& info,
                                                                std::string_view sql) {
  using K = parser::StatementKind;
  if (info.multiple_statements) {
    // Reads and writes run as always (each on its branch); a statement that
    // ends, commits or reshapes the transaction must come alone, where the
    // proxy ends every branch (COMMIT, ROLLBACK, an implicit commit).
    if (auto control = parser::firstTransactionControl(sql, dialect_)) {
      return client_error::make(client_error::kXaUnsupported,
          fmt::format("shardproxy: inside a transaction opened under transactions.cross_backend: atomic, a "
                      "multi-statement packet may hold reads and writes only; send `{}` on its own",
                      control->substr(0, 40)));
    }
  }
  if (info.kind == K::kSavepoint) {
    if (!xa_->others.empty()) {
      return client_error::make(client_error::kXaSavepoint,
                                fmt::format("shardproxy: savepoints are not supported in a transaction spanning "
                                            "backends ({} branches); ROLLBACK the whole transaction instead",
                                            xa_->others.size() + 1));
    }
    xa_->savepoints = true;
  }
  if ((info.kind == K::kCommit || info.kind == K::kRollback) &&
      parser::chainsOrReleases(sql)) {
    return client_error::make(client_error::kXaUnsupported,
                              "shardproxy: COMMIT/ROLLBACK AND CHAIN or RELEASE is not supported inside a transaction "
                              "opened under transactions.cross_backend: atomic; end it, then BEGIN again");
  }
  return std::nullopt;
}

awaitable<void> ClientSession::abortGlobal() {
  GlobalTransaction g = std::move(*xa_);
  xa_.reset();
  auto& registry = worker_.context().xa;
  registry.setPhase(g.gtrid, XaPhase::kRollingBack);
  std::vector<std::unique_ptr<ConnectionBranch>> adapters;
  std::vector<XaParticipant*> parts;
  const bool has_first = pinned_ && pinned_pool_ == g.first;
  if (has_first) adapters.push_back(std::make_unique<ConnectionBranch>(*pinned_, g.first->name()));
  for (auto& b : g.others) {
    if (b.conn) adapters.push_back(std::make_unique<ConnectionBranch>(*b.conn, b.pool->name()));
  }
  for (auto& a : adapters) parts.push_back(a.get());
  co_await rollbackGlobal(g.gtrid, parts);
  // The server's warnings of the rollback are the session's, as ROLLBACK's
  // would be on one server (1196: a non-transactional table kept its change).
  BranchWarnings warnings = co_await readWarnings(adapters);
  rollback_warnings_ = warnings.count;
  if (warnings.count > 0) {
    diagnostics_.onSuccess(warnings.count);
    diagnostics_.setConditions(warnings.conditions);
  }
  std::optional<uint16_t> first_status = has_first ? adapters.front()->lastStatus() : std::nullopt;
  for (auto& b : g.others) {
    if (b.conn) b.pool->release(std::move(b.conn));
  }
  if (has_first) {
    auto conn = std::move(pinned_);
    if (!first_status) conn->markBroken();  // its state is unknown: never pooled
    giveBack(std::move(conn), *g.first, first_status);
  }
  registry.finish(g.gtrid);
  registry.counters.rolled_back.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("session {}: global transaction {} rolled back ({} branches); in transaction: {}", connection_id_,
                g.gtrid, parts.size(), txn_.inTransaction());
}

awaitable<std::optional<protocol::ErrPacket>> ClientSession::endGlobal(bool commit) {
  if (!commit || xa_->aborted || !(pinned_ && pinned_pool_ == xa_->first)) {
    const bool was_aborted = xa_->aborted;
    co_await abortGlobal();
    if (commit && was_aborted) {
      co_return client_error::make(client_error::kTransactionLost,
                                   "shardproxy: COMMIT failed: the transaction was rolled back");
    }
    co_return std::nullopt;
  }
  GlobalTransaction g = std::move(*xa_);
  xa_.reset();
  auto& registry = worker_.context().xa;
  registry.setPhase(g.gtrid, XaPhase::kPreparing);
  std::vector<std::unique_ptr<ConnectionBranch>> adapters;
  adapters.push_back(std::make_unique<ConnectionBranch>(*pinned_, g.first->name()));
  for (auto& b : g.others) adapters.push_back(std::make_unique<ConnectionBranch>(*b.conn, b.pool->name()));
  std::vector<XaParticipant*> parts;
  for (auto& a : adapters) parts.push_back(a.get());
  std::vector<std::string> names;
  for (auto* p : parts) names.push_back(p->name());
  LoggedDecisions decisions(registry, std::move(names));
  XaOutcome outcome = co_await commitGlobal(g.gtrid, parts, decisions, xaFailPointFromEnvironment());
  const std::optional<uint16_t> first_status = adapters.front()->lastStatus();
  for (auto& b : g.others) {
    // A connection still holding a prepared branch is closed: MariaDB lets
    // recovery's connections finish the branch only once it is detached.
    if (outcome.in_doubt) b.conn->markBroken();
    b.pool->release(std::move(b.conn));
  }
  auto conn = std::move(pinned_);
  if (!first_status || outcome.in_doubt) conn->markBroken();
  giveBack(std::move(conn), *g.first, first_status);
  registry.finish(g.gtrid);
  auto& c = registry.counters;
  if (!outcome.committed) {
    c.rolled_back.fetch_add(1, std::memory_order_relaxed);
    c.commit_failed.fetch_add(1, std::memory_order_relaxed);
    co_return outcome.error;
  }
  if (parts.size() == 1) {
    c.committed_one_phase.fetch_add(1, std::memory_order_relaxed);
  } else {
    c.committed_two_phase.fetch_add(1, std::memory_order_relaxed);
    c.participants.fetch_add(parts.size(), std::memory_order_relaxed);
    c.prepare_us.fetch_add(outcome.prepare.count(), std::memory_order_relaxed);
    c.commit_us.fetch_add(outcome.commit.count(), std::memory_order_relaxed);
  }
  if (outcome.unfinished != 0) {
    spdlog::warn("global transaction {} committed; {} branch(es) did not answer XA COMMIT: recovery finishes them",
                 g.gtrid, outcome.unfinished);
  }
  co_return std::nullopt;
}

awaitable<bool> ClientSession::finishGlobal(bool commit) {
  rollback_warnings_ = 0;
  // A named value: not co_await inside a condition (GCC 12, see runOn).
  std::optional<protocol::ErrPacket> failed = co_await endGlobal(commit);
  if (failed) {
    queueError(reply_seq_, *failed);
    co_return co_await client_.flush();
  }
  if (rollback_warnings_ > 0) co_return co_await sendOk(reply_seq_, 0, rollback_warnings_);
  diagnostics_.onSuccess(0);
  co_return co_await sendOk(reply_seq_);
}


awaitable<std::optional<bool>> ClientSession::onGlobalStatement(const parser::StatementInfo& info,
                                                               std::string_view sql) {
  // Turning autocommit on while it is off commits on one server; setting
  // it to what it is commits nothing (parser/implicit_commit.hpp).
  const parser::AutocommitChange autocommit =
      txn_.autocommit() ? parser::AutocommitChange::kNone : parser::autocommitChange(info);
  if (!xa_ && txn_.pendingBegin() && !info.multiple_statements &&
      (parser::causesImplicitCommit(sql, info.kind, dialect_) || autocommit == parser::AutocommitChange::kOn)) {
    // BEGIN is still deferred (nothing ran): the server would commit the
    // empty transaction before this statement, so it simply ends here. Sent
    // first, an XA START would make the server refuse the statement (1399).
    txn_.clearPendingBegin();
    syncPinSlot();
    transaction_map_.reset();
  }
  if (!xa_) co_return std::nullopt;
  if (xa_->aborted) co_await abortGlobal();  // a branch the server ended or lost since
  if (!xa_) co_return std::nullopt;
  if (auto refused = globalRefusal(info, sql)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  using K = parser::StatementKind;
  if (info.kind == K::kCommit || info.kind == K::kRollback) co_return co_await finishGlobal(info.kind == K::kCommit);
  if (autocommit == parser::AutocommitChange::kUnknown) {
    queueError(reply_seq_, client_error::make(client_error::kXaUnsupported,
        "shardproxy: inside a transaction opened under transactions.cross_backend: atomic with autocommit off, "
        "SET autocommit takes 1, 0, ON, OFF, TRUE or FALSE (whether it commits depends on the value); COMMIT first"));
    co_return co_await client_.flush();
  }
  if (parser::causesImplicitCommit(sql, info.kind, dialect_) || autocommit == parser::AutocommitChange::kOn) {
    // One server commits the open transaction before such a statement (DDL,
    // LOCK TABLES, BEGIN, GRANT, ANALYZE ...; SET autocommit = 1 with it
    // off); inside an XA branch it would refuse it (1399) instead. So the
    // proxy commits first, as the server would, and the statement then runs
    // outside any transaction.
    std::optional<protocol::ErrPacket> failed = co_await endGlobal(true);
    if (failed) {
      queueError(reply_seq_, *failed);
      co_return co_await client_.flush();
    }
  }
  co_return std::nullopt;
}

}  // namespace sp::proxy
