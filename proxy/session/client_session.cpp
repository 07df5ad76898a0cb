#include "proxy/session/client_session.hpp"

#include "conf/config.hpp"
#include "routing/archived_months.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <span>
#include <spdlog/spdlog.h>

#include "protocol/constants.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/generic_packets.hpp"
#include "parser/local_queries.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/exec/backend_shard_channel.hpp"
#include "proxy/exec/route_execution.hpp"
#include "proxy/session/statement_limits.hpp"
#include "routing/explain.hpp"
#include "routing/plan.hpp"
#include "routing/prepare_target.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {
bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

using protocol::Command;
namespace status = protocol::status;

ClientSession::ClientSession(Worker& worker, tcp::socket socket, uint32_t connection_id)
    : worker_(worker),
      client_(std::move(socket), worker.context().config().server.max_packet_bytes),
      connection_id_(connection_id),
      write_gate_(worker.context().write_hold) {
  error_code ec;
  auto ep = client_.socket().remote_endpoint(ec);
  peer_ = ec ? std::string("unknown") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  worker_.add(this);
  worker_.context().sessions.fetch_add(1);
}

ClientSession::~ClientSession() {
  worker_.remove(this);
  worker_.context().sessions.fetch_sub(1);
  if (counted_tls_) worker_.context().tls_sessions.fetch_sub(1);
  if (counted_in_transaction_) worker_.context().sessions_in_transaction.fetch_sub(1);
}

BackendPool& ClientSession::defaultPool() { return *worker_.defaultPool(); }

void ClientSession::closeIfIdle() {
  if (idle_) client_.close();
}

void ClientSession::kill() { client_.close(); }

uint16_t ClientSession::statusFlags() const { return txn_.clientStatus(); }

awaitable<bool> ClientSession::sendOk(uint8_t seq, uint16_t extra_status, uint16_t warnings) {
  protocol::OkPacket ok;
  ok.status_flags = statusFlags() | extra_status;
  ok.warnings = warnings;
  protocol::Bytes out;
  protocol::encode(ok, capabilities_, out);
  client_.append(out, seq);
  co_return co_await client_.flush();
}

// Not a coroutine on purpose: callers build ERR packets from temporaries, and
// GCC 12 mishandles some temporaries inside co_await expressions.
void ClientSession::queueError(uint8_t seq, const protocol::ErrPacket& err) {
  diagnostics_.onError(err);  // SHOW WARNINGS shows it, as on the server
  record_.onError(err.error_code);
  protocol::Bytes out;
  protocol::encode(err, out);
  client_.append(out, seq);
}

awaitable<void> ClientSession::refuseOutOfOrder(uint8_t expected_seq) {
  queueError(expected_seq, client_error::make(client_error::kPacketsOutOfOrder, "Got packets out of order"));
  co_await client_.flush();
}

awaitable<void> ClientSession::run() {
  if (co_await handshake()) {
    auto& ctx = worker_.context();
    for (;;) {
      if (ctx.shutting_down.load()) break;
      idle_ = true;
      current_command_ = {};
      auto msg = co_await client_.read();
      idle_ = false;
      state_since_ = std::chrono::steady_clock::now();
      if (!msg) {
        if (msg.error() == StreamError::kTooLarge) {
          queueError(0, client_error::make(client_error::kPacketTooLarge,
                                           "Got a packet bigger than 'max_allowed_packet' bytes"));
          co_await client_.flush();
        } else if (msg.error() == StreamError::kOutOfOrder) {
          co_await refuseOutOfOrder(client_.expectedSequenceId());
        }
        break;
      }
      if (msg->first_sequence_id != 0) {
        // A command starts the exchange at 0. MariaDB answers any other id
        // with 1156 under the id it expected, and closes the connection.
        co_await refuseOutOfOrder(0);
        break;
      }
      reply_seq_ = static_cast<uint8_t>(msg->sequence_id + 1);
      current_command_ = msg->payload;
      ctx.statements.fetch_add(1, std::memory_order_relaxed);
      auto& observer = worker_.observer();
      if (observer.enabled()) beginRecord(msg->payload);
      write_gate_.beginCommand();
      const bool go_on = co_await dispatch(msg->payload);
      write_gate_.settle(inTransaction());
      hot_key_holds_.settle(inTransaction() && !txn_.lost());
      observer.finish(record_, {user_, peer_, connection_id_});
      if (!go_on) break;
    }
  }
  co_await releasePinned();
  hot_key_holds_.clear();  // the transaction is gone with the session
  client_.close();
  pin_slot_.reset();
  user_slot_.reset();  // users[].max_connections counts sessions until they end
}

awaitable<bool> ClientSession::dispatch(protocol::ByteView payload) {
  if (payload.empty()) {
    queueError(reply_seq_, client_error::make(client_error::kMalformedPacket, "shardproxy: empty command packet"));
    co_await client_.flush();
    co_return false;
  }
  switch (static_cast<Command>(payload[0])) {
    case Command::kQuit:
      co_return false;
    case Command::kQuery: {
      auto ticket = admitStatement(payload);
      if (!ticket) co_return co_await client_.flush();
      co_return co_await onQuery(payload);
    }
    case Command::kProcessKill:
      co_return co_await onProcessKill(payload);
    case Command::kPing:
      co_return co_await sendOk(reply_seq_);
    case Command::kInitDb:
      co_return co_await onInitDb(payload);
    case Command::kFieldList:
      co_return co_await onFieldList(payload);
    case Command::kStatistics:
      co_return co_await onPassthrough(payload, protocol::ResponseKind::kStatistics, false);
    case Command::kResetConnection:
      co_return co_await onResetConnection();
    case Command::kChangeUser:
      co_return co_await onChangeUser(payload);
    case Command::kSetOption:
      co_return co_await onSetOption(payload);
    case Command::kStmtPrepare:
      co_return co_await onStmtPrepare(payload);
    case Command::kStmtExecute: {
      auto ticket = admitStatement(payload);
      if (!ticket) co_return co_await client_.flush();
      co_return co_await onStmtExecute(payload);
    }
    case Command::kStmtSendLongData:
      onStmtSendLongData(payload);
      co_return true;
    case Command::kStmtReset:
      co_return co_await onStmtReset(payload);
    case Command::kStmtClose:
      onStmtClose(payload);
      co_return true;
    case Command::kProcessInfo:
      // Deprecated form of SHOW PROCESSLIST: the proxy's sessions for everyone.
      co_return co_await onShowProcesslist(false, false);
    case Command::kStmtFetch:
      queueError(reply_seq_, client_error::make(client_error::kNotSupported,
          "shardproxy: server-side cursors (COM_STMT_FETCH) are not supported"));
      co_return co_await client_.flush();
    default:
      queueError(reply_seq_, client_error::make(client_error::kUnknownCommand, "Unknown command"));
      co_return co_await client_.flush();
  }
}

awaitable<std::optional<bool>> ClientSession::answerWhileLost(parser::StatementKind kind, bool multiple_statements) {
  using Answer = TransactionState::LostAnswer;
  switch (txn_.answerWhileLost(kind, multiple_statements)) {
    case Answer::kNotLost:
      co_return std::nullopt;
    case Answer::kRolledBack:
      transaction_map_.reset();
      co_return co_await sendOk(reply_seq_);
    case Answer::kCommitFailed:
      transaction_map_.reset();
      queueError(reply_seq_, client_error::make(client_error::kTransactionLost,
          "shardproxy: COMMIT failed: the transaction was lost with its backend connection and rolled back; "
          "nothing of it was committed"));
      co_return co_await client_.flush();
    case Answer::kRefused:
      queueError(reply_seq_, client_error::make(client_error::kTransactionLost,
          "shardproxy: the transaction was lost with its backend connection and rolled back; "
          "ROLLBACK to end it (statements are refused until then)"));
      co_return co_await client_.flush();
  }
  co_return std::nullopt;
}

void ClientSession::reportBackendFailure(const BackendPool& pool, uint8_t seq, bool during_statement,
                                         bool timed_out) {
  const auto& cfg = pool.config();
  if (timed_out) {
    std::string msg = fmt::format("Query execution was interrupted (shardproxy: backends[].query_timeout_ms, {} ms, "
                                  "exceeded on backend {}; the server's query was killed)",
                                  cfg.query_timeout_ms, cfg.name);
    if (txn_.inTransaction()) {
      msg += "; its connection was closed, so the transaction was rolled back: every statement is refused until ROLLBACK";
    } else if (bound_.any() || tables_locked_) {
      msg += "; session state held on that connection (temporary tables, user variables, locks) is lost";
    }
    protocol::Bytes out;
    protocol::encode(client_error::make(client_error::kStatementTimeout, msg), out);
    client_.append(out, seq);
    return;
  }
  // Cut by the proxy because the server stopped answering its probes
  // (BackendPool::markDown), not lost by chance: said so, under its own code.
  const bool stopped = !pool.probeDown().empty();
  std::string msg = stopped ? fmt::format("shardproxy: backend {} ({}:{}) stopped answering ({}): the statement was "
                                          "abandoned and may or may not have taken effect",
                                          cfg.name, cfg.address.host, cfg.address.port, pool.probeDown())
                            : fmt::format("shardproxy: lost connection to backend {} ({}:{}){}", cfg.name,
                                          cfg.address.host, cfg.address.port, during_statement ? " during query" : "");
  if (txn_.inTransaction()) {
    msg += "; the transaction was rolled back by the loss: every statement is refused until ROLLBACK";
  }
  else if (bound_.any() || tables_locked_) msg += "; session state held on that connection (temporary tables, user variables, locks) is lost";
  protocol::Bytes out;
  protocol::encode(client_error::make(stopped ? client_error::kBackendStoppedAnswering : client_error::kBackendLost, msg),
                   out);
  client_.append(out, seq);
}

void ClientSession::recordEffects(const parser::StatementInfo& info, BackendConnection& conn,
                                  const protocol::SessionChanges& changes, bool changes_unreadable) {
  using parser::StatementKind;
  const bool tracked = conn.tracksSession();
  if (tracked) {
    // The server said what changed: exact values, whatever the statement's spelling.
    const bool set_or_use = info.kind == StatementKind::kSet || info.kind == StatementKind::kUse;
    // SET STATEMENT sql_mode=... FOR INSERT ...: MariaDB reports the
    // statement's temporary values as changes, but the session keeps its own.
    protocol::SessionChanges kept;
    if (info.set_statement_for) {
      kept.schema_changed = changes.schema_changed;
      kept.schema = changes.schema;
    }
    const protocol::SessionChanges& adopted = info.set_statement_for ? kept : changes;
    const TrackedAdoption adoption =
        changes_unreadable ? TrackedAdoption::kUncarriedVariable
                           : adoptTrackedChanges(adopted, set_or_use, desired_, conn.applied());
    // A state change the statement itself explains (it sets a user variable,
    // creates a temporary table...) is noted below by its reason; one nothing
    // explains (SET ROLE, a procedure's) may change how any statement runs.
    if (adoption == TrackedAdoption::kUncarriedVariable ||
        (adoption == TrackedAdoption::kStateChanged && !explainsStateChange(info))) {
      bound_.note(ConnectionBoundState::kUncarriedSettings);
    }
  }
  const auto settings = info.kind == StatementKind::kSet ? std::span<const parser::SessionSetting>(info.settings)
                                                         : std::span<const parser::SessionSetting>();
  idle_timeout_.onStatement(settings, changes, tracked && !changes_unreadable, worker_.context().config().server);
  if (info.kind == StatementKind::kSet) {
    for (const auto& s : info.settings) {
      // A variable the server reported is carried as reported (above); one
      // it did not report (MariaDB 10.11 reports nothing for
      // `SET @@autocommit = FALSE`) as the statement wrote it.
      const bool reported = tracked && s.kind == parser::SessionSetting::Kind::kSystemVariable &&
                            std::any_of(changes.variables.begin(), changes.variables.end(),
                                        [&](const auto& v) { return equalsIgnoreCase(v.name, s.name); });
      // session_track_* are the client's own (tracking_), never replayed on
      // the connections the session borrows.
      const bool client_tracking = s.kind == parser::SessionSetting::Kind::kSystemVariable && isTrackingVariable(s.name);
      if (!reported && !client_tracking) {
        desired_.apply(s);
        conn.applied().apply(s);
      }
      if (s.kind == parser::SessionSetting::Kind::kUserVariable) bound_.note(ConnectionBoundState::kUserVariables);
      if (s.kind == parser::SessionSetting::Kind::kNextTransaction) bound_.note(ConnectionBoundState::kNextTransaction);
    }
  } else if (info.kind == StatementKind::kUse) {
    desired_.database = info.database;
    conn.applied().database = info.database;
  } else if (info.kind == StatementKind::kLockTables) {
    tables_locked_ = true;
  } else if (info.kind == StatementKind::kUnlockTables) {
    tables_locked_ = false;
  } else if (info.kind == StatementKind::kPrepareSql) {
    bound_.note(ConnectionBoundState::kSqlPrepare);  // the prepared statement lives on this connection
  }
  if (info.creates_temporary_table) bound_.note(ConnectionBoundState::kTemporaryTables);
  if (info.uses_named_lock) bound_.note(ConnectionBoundState::kNamedLocks);
  if (info.uses_user_variable) bound_.note(ConnectionBoundState::kUserVariables);
  if (info.uses_found_rows) bound_.note(ConnectionBoundState::kFoundRows);
  if (info.multiple_statements) bound_.note(ConnectionBoundState::kMultiStatements);
  if (info.kind == StatementKind::kSet || info.kind == StatementKind::kUse || !changes.variables.empty()) {
    updateDialect();
  }
}

namespace {

// Statements that only change or end session state never name tables.
bool isSessionControl(parser::StatementKind kind) {
  using K = parser::StatementKind;
  switch (kind) {
    case K::kEmpty:
    case K::kSet:
    case K::kUse:
    case K::kBegin:
    case K::kXa:
    case K::kCommit:
    case K::kRollback:
    case K::kSavepoint:
    case K::kUnlockTables:
      return true;
    default:
      return false;
  }
}

routing::MultiShardWrites multiShardWrites(const conf::Config& config) {
  return config.scatter.multi_shard_writes == conf::MultiShardWrites::kBestEffort
             ? routing::MultiShardWrites::kBestEffort
             : routing::MultiShardWrites::kRefuse;
}

protocol::ErrPacket refusalToErr(const routing::Refusal& r) {
  auto info = routing::routeErrorInfo(r.code);
  return protocol::ErrPacket{info.mysql_errno, std::string(info.sqlstate), r.message};
}

}  // namespace

std::shared_ptr<const routing::CompiledShardMap> ClientSession::mapSnapshot() {
  if (transaction_map_) return transaction_map_;
  auto map = worker_.context().shard_map.load();
  if (inTransaction()) transaction_map_ = map;
  return map;
}

// Statements (COM_QUERY, COM_STMT_EXECUTE) are recorded; other commands are not.
void ClientSession::beginRecord(protocol::ByteView payload) {
  if (payload.empty()) return;
  const auto command = static_cast<Command>(payload[0]);
  if (command != Command::kQuery && command != Command::kStmtExecute) return;
  record_.begin(std::chrono::steady_clock::now());
  if (auto query = protocol::decodeComQuery(payload)) record_.sql = query->query;
}

routing::Plan ClientSession::planFor(std::string_view sql, const parser::StatementInfo& info,
                                     std::span<const routing::ParamValue> params,
                                     std::span<const parser::Token> tokens) {
  routing::Plan plan = choosePlan(sql, info, params, tokens);
  if (record_.active) {
    if (record_.sql.empty()) record_.sql = sql;  // a prepared statement's text (kept by statements_)
    record_.onPlan(plan, worker_.context().config().default_backend);
  }
  return plan;
}

routing::Plan ClientSession::choosePlan(std::string_view sql, const parser::StatementInfo& info,
                                        std::span<const routing::ParamValue> params,
                                        std::span<const parser::Token> tokens) {
  routing::Plan passthrough;
  passthrough.kind = routing::PlanKind::kPassthrough;
  if (isSessionControl(info.kind)) return passthrough;
  auto map = mapSnapshot();
  if (!map) return passthrough;
  planned_map_version_ = map->version();
  routing::PlannerInput input{*map, worker_.context().config().default_backend, params};
  input.dialect = dialect_;
  input.names = nameScope();
  input.multi_shard_writes = multiShardWrites(worker_.context().config());
  input.limits = parseLimits(worker_.context().config().limits);
  if (info.kind == parser::StatementKind::kPrepareSql) return routing::planSqlPrepare(sql, input);
  routing::Plan plan =
      worker_.planCache().plan(sql, tokens, input, record_.active ? &record_.normalized : nullptr);
  // Statements on months ARCHIVE ... BEFORE dropped (routing/archived_months.hpp).
  auto archived = worker_.context().archived_months.load();
  if (auto backfill = routing::planBackfill(plan, info.kind, archived.get(), sql, input)) return std::move(*backfill);
  if (auto refused = routing::refuseArchivedMonthWrite(plan, info.kind, archived.get())) return std::move(*refused);
  return plan;
}

std::variant<ClientSession::StatementTarget, protocol::ErrPacket> ClientSession::resolve(
    const routing::Plan& plan, std::string_view sql, const parser::StatementInfo& info, bool metadata_only) {
  StatementTarget target{pinned_pool_ ? pinned_pool_ : &defaultPool(), {}};
  switch (plan.kind) {
    case routing::PlanKind::kRefused:
      return refusalToErr(*plan.refusal);
    case routing::PlanKind::kPassthrough:
      return target;
    case routing::PlanKind::kMultiRoute:
    case routing::PlanKind::kScatter:
      // Callers run scatter plans with runScatter(); anything else spanning shards is not executable here.
      return client_error::make(client_error::kNotSupported,
                                "shardproxy: this statement spans several shards and cannot be merged in this form");
    case routing::PlanKind::kMultiWrite:
      // Callers run split writes with runMultiWrite() (prepared statements
      // through their text form, client_prepared.cpp): not executable here.
      return client_error::make(client_error::kNotSupported,
                                "shardproxy: an INSERT/REPLACE whose rows land on several shards cannot run in this form");
    case routing::PlanKind::kRoute: {
      const auto& t = plan.targets.front();
      target.pool = worker_.pool(t.backend);
      if (!target.pool) {
        return client_error::make(client_error::kGeneric, "shardproxy: shard map names unknown backend " + t.backend);
      }
      if (t.sql != sql) target.sql = t.sql;
      break;
    }
  }
  if (pinned_pool_ && target.pool != pinned_pool_ && !metadata_only) {
    // The pinned connection holds a transaction, table locks or session
    // state on one backend; the statement belongs on another.
    // A global transaction (transactions.cross_backend: atomic) takes the
    // statement on another branch (session_xa.cpp).
    if (xa_ && !tables_locked_ && !usesConnectionBoundState(info)) return target;
    if (txn_.transactional() || tables_locked_) {
      return client_error::make(client_error::kCrossBackend, fmt::format(
          "shardproxy: this transaction is bound to backend {}, but the statement routes to backend {}; "
          "transactions spanning backends need transactions.cross_backend: atomic and a plain BEGIN (docs/routing.md): "
          "COMMIT first, or keep the transaction on one backend",
          pinned_pool_->name(), target.pool->name()));
    }
    if (usesConnectionBoundState(info)) {
      return client_error::make(client_error::kCrossBackend, fmt::format(
          "shardproxy: this session keeps connection-bound state (user variables, temporary tables, locks or "
          "prepared SQL) on backend {}, and this statement would need such state on backend {}",
          pinned_pool_->name(), target.pool->name()));
    }
  }
  return target;
}

awaitable<bool> ClientSession::onQuery(protocol::ByteView payload) {
  const std::string_view sql = protocol::decodeComQuery(payload)->query;  // dispatch() saw its command byte
  // Before anything holds its tokens: a 20 MB statement is measured in O(1) memory.
  if (auto refused = tokenBudgetRefusal(sql, worker_.context().config().limits, dialect_)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  // One lexing pass: every reader below takes its tokens and kind from here.
  parser::analyze(sql, dialect_, analysis_);
  if (auto inner = routing::explainShardsStatement(sql, analysis_.tokens)) co_return co_await onExplainShards(*inner);
  parser::StatementInfo& info = analysis_.info;
  if (auto refused = accessRefusal(sql, analysis_.defaultTokens())) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  using K = parser::StatementKind;
  if (setsReadsVariable(info)) {
    // The proxy's own variable: no backend knows it (docs/availability.md).
    if (auto refused = readsSettingRefusal(info)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
    diagnostics_.onSuccess(0);
    co_return co_await sendOk(reply_seq_);
  }
  if (info.calls_connection_id && info.kind == K::kSelect && !info.multiple_statements) {
    auto column = analysis_.defaultTokens().empty() ? parser::connectionIdQuery(sql)
                                                    : parser::connectionIdQuery(sql, analysis_.tokens);
    if (column) co_return co_await sendConnectionId(*column);
  }
  if (info.kind == K::kKill) {
    // Never forwarded: the id is the proxy's, and on a backend it would name
    // an unrelated server thread.
    if (info.multiple_statements) info.kill.unsupported = "KILL in a multi-statement";
    co_return co_await onKill(info.kill);
  }
  if (showsLogicalProcesslist(sql, info)) co_return co_await onShowProcesslist(*parser::processlistQuery(sql), false);
  if (info.reads_diagnostics && !info.multiple_statements) {
    // The previous statement's conditions are the session's, not those of
    // whichever pooled connection this statement would get.
    if (auto local = diagnostics_.answer(sql)) co_return co_await sendLocalResult(*local);
    if (auto n = parser::diagnosticsConditionNumber(sql); n && diagnostics_.takeInvalidConditionNumber(*n)) {
      co_return co_await sendInvalidConditionOk();
    }
  }
  // A global transaction first: one a branch loss ended is rolled back before the lost answer.
  if (auto answered = co_await onGlobalStatement(info, sql)) co_return *answered;
  if (auto answered = co_await answerWhileLost(info.kind, info.multiple_statements)) co_return *answered;
  if (info.multiple_statements && (capabilities_ & protocol::cap::kMultiStatements)) {
    co_return co_await onMultiStatement(payload, sql);
  }
  if (readsLogicalProcesslist(sql, info)) {
    // The proxy's sessions, not a backend's threads (session_processlist_select.cpp).
    if (auto refused = processlistSelectRefusal(sql, info)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
    co_return co_await runProcesslistSelect(sql, info, nullptr);
  }
  if (auto catalog = catalogPlan(sql, info)) co_return co_await runCatalog(*catalog);
  if (auto ddl = logicalDdl(sql, info)) co_return co_await runSchemaChange(std::move(*ddl));
  if (info.kind == K::kPrepareSql) {
    auto refused = catalogPrepareRefusal(sql);
    if (!refused) refused = processlistSqlPrepareRefusal(sql);
    if (!refused) refused = co_await sqlPrepareRefusal(sql);
    if (refused) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
  }
  if (!pinned_ && !info.multiple_statements) {
    // WITH CONSISTENT SNAPSHOT takes its snapshot when it runs: deferring it
    // to the first statement would let that statement see later commits.
    if (info.kind == K::kBegin && !info.consistent_snapshot) {
      if (auto refused = reservePin(info)) {
        queueError(reply_seq_, *refused);
        co_return co_await client_.flush();
      }
      diagnostics_.onSuccess(0);
      txn_.deferBegin(std::string(sql));
      transaction_map_.reset();
      mapSnapshot();
      co_return co_await sendOk(reply_seq_);
    }
    if ((info.kind == K::kCommit || info.kind == K::kRollback) && txn_.pendingBegin()) {
      // Nothing ran since BEGIN: there is nothing to commit or roll back.
      diagnostics_.onSuccess(0);
      txn_.clearPendingBegin();
      syncPinSlot();
      transaction_map_.reset();
      co_return co_await sendOk(reply_seq_);
    }
  }
  // Planned here: only a row write to a sharded table awaits planWrite (a
  // move's write hold); anything else needs no coroutine frame for it.
  std::variant<routing::Plan, protocol::ErrPacket> planned = planFor(sql, info, {}, analysis_.defaultTokens());
  if (writeMayBeHeld(info, std::get<routing::Plan>(planned))) {
    planned = co_await planWrite(sql, info, {}, analysis_.defaultTokens(), true,
                                 std::move(std::get<routing::Plan>(planned)));
  }
  if (auto* err = std::get_if<protocol::ErrPacket>(&planned)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  routing::Plan& plan = std::get<routing::Plan>(planned);
  if (plan.kind == routing::PlanKind::kScatter && plan.scatter) co_return co_await runScatter(*plan.scatter, info, false, sql);
  if (plan.kind == routing::PlanKind::kMultiWrite) co_return co_await runMultiWrite(plan, info);
  auto routed = resolve(plan, sql, info);
  if (auto* err = std::get_if<protocol::ErrPacket>(&routed)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  auto& target = std::get<StatementTarget>(routed);
  Outbound out;
  if (target.sql.empty()) out.payload = payload;
  else out.sql = target.sql;
  setKeyTargets(out, plan, info);
  // GET DIAGNOSTICS, @@warning_count: run where they read an empty area when
  // the session's previous statement left nothing (not another session's).
  // (When it left conditions, they are on a connection that may be gone: the
  // session's SHOW WARNINGS has them, these forms do not.)
  out.clear_diagnostics = info.reads_diagnostics && !pinned_ && diagnostics_.conditions().empty();
  BackendPool* pool = co_await readPool(*target.pool, info, sql, analysis_.tokens);
  co_return co_await runOn(*pool, out, info);
}

awaitable<bool> ClientSession::sendLocalResult(const LocalResult& result, bool binary_rows) {
  protocol::Bytes out;
  appendLocalResult(out, result, capabilities_, statusFlags(), reply_seq_, binary_rows, mariadb_capabilities_);
  client_.appendFramedBytes(out);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::onExplainShards(std::string_view statement) {
  LocalResult result;
  for (auto column : routing::kExplainColumns) result.columns.emplace_back(column);
  auto map = mapSnapshot();
  const auto& default_backend = worker_.context().config().default_backend;
  if (!map) {
    result.rows.push_back({"-", default_backend, "-", std::string(statement)});
  } else {
    routing::PlannerInput input{*map, default_backend};
    input.dialect = dialect_;
    input.names = nameScope();
    input.multi_shard_writes = multiShardWrites(worker_.context().config());
    input.limits = parseLimits(worker_.context().config().limits);
    for (auto& row : routing::explainRows(routing::planQuery(statement, input))) {
      result.rows.push_back({std::move(row.shard), std::move(row.backend), std::move(row.table), std::move(row.sql)});
    }
  }
  co_return co_await sendLocalResult(result);
}

awaitable<bool> ClientSession::onResetConnection() {
  co_await releasePinned();
  bound_.clear();
  tables_locked_ = false;
  txn_.reset(initial_status_);
  diagnostics_ = SessionDiagnostics{};
  statements_.clear();
  last_insert_id_.reset();
  desired_ = initial_;
  reads_override_.reset();  // like any session variable (read-your-writes marks stay: the writes happened)
  tracking_ = worker_.context().tracking_defaults;
  idle_timeout_.onReset(worker_.context().config().server);
  syncPinSlot();
  co_return co_await sendOk(reply_seq_);
}

awaitable<bool> ClientSession::onSetOption(protocol::ByteView payload) {
  // Answered with EOF.
  auto set = protocol::decodeComSetOption(payload);
  if (!set) {
    queueError(reply_seq_, client_error::make(client_error::kMalformedPacket, "shardproxy: malformed COM_SET_OPTION"));
    co_return co_await client_.flush();
  }
  if (set->option == protocol::SetOption::kMultiStatementsOn) capabilities_ |= protocol::cap::kMultiStatements;
  else capabilities_ &= ~protocol::cap::kMultiStatements;
  protocol::Bytes out;
  protocol::encode(protocol::EofPacket{0, statusFlags()}, out);
  client_.append(out, reply_seq_);
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
