// A ClientSession's transaction over several backends (client_session.hpp,
// "session_xa.cpp"; docs/routing.md, "Transactions across backends"): the
// XA START that opens it, the branches that join it, and its end through
// proxy/exec/xa_commit.hpp.
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdlib>
#include <thread>

#include "conf/config.hpp"
#include "parser/implicit_commit.hpp"
#include "parser/split.hpp"
#include "protocol/constants.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/core/xa_decision_log.hpp"
#include "proxy/core/xa_fleet_store.hpp"
#include "proxy/exec/xa_commit.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

using protocol::Command;
namespace status = protocol::status;

// A branch's connection as the commit protocol sees it.
class ConnectionBranch final : public XaParticipant {
 public:
  ConnectionBranch(BackendConnection& conn, const std::string& name) : conn_(conn), name_(name) {}
  const std::string& name() const override { return name_; }
  awaitable<XaReply> run(std::string sql) override {
    auto r = co_await conn_.command(Command::kQuery, sql);
    XaReply reply;
    if (r) {
      reply.status_flags = r->status_flags;
      reply.warnings = r->warnings;
      last_warnings_ = r->warnings;
      last_status_ = r->status_flags;
    } else if (r.error().kind == BackendError::Kind::kServer) {
      reply.kind = XaReply::Kind::kServerError;
      reply.error = r.error().toErrPacket();
    } else {
      reply.kind = XaReply::Kind::kLost;
    }
    co_return reply;
  }
  std::optional<uint16_t> lastStatus() const { return last_status_; }
  // Of the last statement that answered OK (for a rollback: XA ROLLBACK's).
  uint16_t lastWarnings() const { return last_warnings_; }
  BackendConnection& connection() { return conn_; }

 private:
  uint16_t last_warnings_ = 0;
  BackendConnection& conn_;
  const std::string& name_;
  std::optional<uint16_t> last_status_;
};

// The decision log (etcd in a fleet, else SQLite) and the registry's phase,
// as the protocol writes them.
class LoggedDecisions final : public XaDecisions {
 public:
  LoggedDecisions(XaRegistry& registry, std::vector<std::string> branches)
      : registry_(registry), branches_(std::move(branches)) {}
  XaDecisionWrite recordCommit(const std::string& gtrid) override {
    const XaDecisionWrite written = write(gtrid);
    if (written == XaDecisionWrite::kRecorded) registry_.setPhase(gtrid, XaPhase::kCommitting);
    if (written == XaDecisionWrite::kUnknown) registry_.counters.decisions_unknown.fetch_add(1, std::memory_order_relaxed);
    return written;
  }
  void forget(const std::string& gtrid) override {
    if (registry_.fleet) registry_.fleet->forget(gtrid);
    else if (registry_.log) registry_.log->forget(gtrid);
  }

 private:
  XaDecisionWrite write(const std::string& gtrid) {
    if (registry_.fleet) return registry_.fleet->recordCommit(gtrid, branches_);
    if (!registry_.log) return XaDecisionWrite::kRefused;
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    const bool ok = registry_.log->recordCommit(gtrid, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
    return ok ? XaDecisionWrite::kRecorded : XaDecisionWrite::kRefused;
  }

  XaRegistry& registry_;
  std::vector<std::string> branches_;
};

// SHARDPROXY_XA_FAILPOINT=<step>[:<n>[:pause_ms]] (test only, docs/configuration.md):
// the n-th time (default 1) a commit reaches <step> the process _exits, or
// with pause_ms that commit's worker thread sleeps that long (a test kills a
// backend meanwhile).
struct FailPointSpec {
  XaStep step;
  uint64_t nth = 1;
  uint64_t pause_ms = 0;
};

std::optional<FailPointSpec> parseFailPoint(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    auto colon = text.find(':');
    parts.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text = text.substr(colon + 1);
  }
  auto step = parseXaStep(parts[0]);
  if (!step || parts.size() > 3) return std::nullopt;
  FailPointSpec spec{*step};
  if (parts.size() > 1) spec.nth = std::max<uint64_t>(1, std::strtoull(std::string(parts[1]).c_str(), nullptr, 10));
  if (parts.size() > 2) spec.pause_ms = std::strtoull(std::string(parts[2]).c_str(), nullptr, 10);
  return spec;
}

const XaFailPoint& failPoint() {
  static const XaFailPoint point = []() -> XaFailPoint {
    const char* env = std::getenv("SHARDPROXY_XA_FAILPOINT");
    if (!env || !*env) return nullptr;
    auto spec = parseFailPoint(env);
    if (!spec) return nullptr;
    spdlog::warn("SHARDPROXY_XA_FAILPOINT={}: test only", env);
    return [spec = *spec, hits = std::make_shared<std::atomic<uint64_t>>(0)](XaStep at) {
      if (at != spec.step || hits->fetch_add(1) + 1 != spec.nth) return;
      if (spec.pause_ms == 0) std::_Exit(86);
      spdlog::warn("SHARDPROXY_XA_FAILPOINT: pausing this commit {} ms", spec.pause_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(spec.pause_ms));
    };
  }();
  return point;
}

// BEGIN, BEGIN WORK, START TRANSACTION [READ WRITE]: what XA START replaces
// (READ ONLY, WITH CONSISTENT SNAPSHOT and comments keep a plain BEGIN).
bool plainBegin(std::string_view sql) {
  std::string words;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!words.empty() && words.back() != ' ') words.push_back(' ');
    } else if (c != ';') {
      words.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  while (!words.empty() && words.back() == ' ') words.pop_back();
  return words == "begin" || words == "begin work" || words == "start transaction" ||
         words == "start transaction read write";
}

bool containsWord(std::string_view sql, std::string_view word) {
  std::string lower(sql.size(), ' ');
  for (size_t i = 0; i < sql.size(); ++i) lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(sql[i])));
  return lower.find(word) != std::string::npos;
}

}  // namespace

std::string ClientSession::beginStatement(const BackendPool& pool, std::optional<std::string>& gtrid) {
  const std::string& begin = *txn_.pendingBegin();
  const auto& cfg = worker_.context().config().transactions;
  if (cfg.cross_backend != conf::CrossBackend::kAtomic || !plainBegin(begin)) return begin;
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
    auto r = co_await conn->command(Command::kQuery, start);
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
      if (server_status && !(*server_status & status::kInTrans)) xa_->aborted = true;  // the server ended it
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
    for (const auto& span : parser::splitStatements(sql, dialect_)) {
      const std::string_view text = span.text(sql);
      const auto kind = parser::classify(text, dialect_).kind;
      using K = parser::StatementKind;
      if (kind == K::kBegin || kind == K::kCommit || kind == K::kRollback || kind == K::kSavepoint ||
          kind == K::kXa || kind == K::kLockTables || kind == K::kUnlockTables ||
          parser::causesImplicitCommit(text, kind, dialect_)) {
        return client_error::make(client_error::kXaUnsupported,
            fmt::format("shardproxy: inside a transaction opened under transactions.cross_backend: atomic, a "
                        "multi-statement packet may hold reads and writes only; send `{}` on its own",
                        text.substr(0, 40)));
      }
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
      (containsWord(sql, "chain") || containsWord(sql, "release"))) {
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
  uint16_t warnings = 0;
  std::vector<std::vector<std::optional<std::string>>> conditions;
  for (auto& a : adapters) {
    if (a->lastWarnings() == 0) continue;
    warnings = static_cast<uint16_t>(std::min<uint32_t>(0xffff, warnings + a->lastWarnings()));
    auto rows = co_await a->connection().queryRows("SHOW WARNINGS");
    if (rows) conditions.insert(conditions.end(), rows->begin(), rows->end());
  }
  rollback_warnings_ = warnings;
  if (warnings > 0) {
    diagnostics_.onSuccess(warnings);
    diagnostics_.setConditions(conditions);
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
  XaOutcome outcome = co_await commitGlobal(g.gtrid, parts, decisions, failPoint());
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
  if (!xa_ && txn_.pendingBegin() && !info.multiple_statements &&
      parser::causesImplicitCommit(sql, info.kind, dialect_)) {
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
  if (parser::causesImplicitCommit(sql, info.kind, dialect_)) {
    // One server commits the open transaction before such a statement (DDL,
    // LOCK TABLES, BEGIN, GRANT, ANALYZE ...); inside an XA branch it would
    // refuse it (1399) instead. So the proxy commits first, as the server
    // would, and the statement then runs outside any transaction.
    std::optional<protocol::ErrPacket> failed = co_await endGlobal(true);
    if (failed) {
      queueError(reply_seq_, *failed);
      co_return co_await client_.flush();
    }
  }
  co_return std::nullopt;
}

}  // namespace sp::proxy
