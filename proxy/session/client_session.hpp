// One client connection: handshake and authentication, then the command loop.
// Outside a transaction each statement borrows a backend connection and gives
// it back once the response is forwarded (multiplexing); a transaction or
// other connection-bound state (temporary tables, user variables, named
// locks, LOCK TABLES) pins the connection to the session until it ends.
// The session never formats packets or parses SQL itself: it calls
// protocol/ and parser/.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <optional>
#include <variant>

#include "parser/analysis.hpp"
#include "parser/classify.hpp"
#include "parser/dialect.hpp"
#include "protocol/prepared.hpp"
#include "proxy/session/client_statements.hpp"
#include "proxy/session/connection_bound_state.hpp"
#include "proxy/session/process_row.hpp"
#include "proxy/core/backend_admission.hpp"
#include "proxy/core/hot_key_gate.hpp"
#include "proxy/core/host_limits.hpp"
#include "proxy/core/statement_limit_table.hpp"
#include "proxy/session/idle_timeout.hpp"
#include "proxy/session/session_tracking.hpp"
#include "routing/catalog.hpp"
#include "routing/schema_change.hpp"
#include "routing/plan.hpp"
#include "routing/map/shard_map.hpp"
#include "protocol/response_tracker.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/observe/metrics.hpp"
#include "proxy/net/packet_stream.hpp"
#include "proxy/exec/route_execution.hpp"
#include "proxy/backend/session_state.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/session/session_diagnostics.hpp"
#include "proxy/session/session_last_insert_id.hpp"
#include "proxy/session/read_your_writes.hpp"
#include "proxy/session/transaction_state.hpp"
#include "proxy/core/write_hold.hpp"

namespace sp::proxy {

class Worker;
class BackendPool;

class ClientSession {
 public:
  ClientSession(Worker& worker, tcp::socket socket, uint32_t connection_id);
  ~ClientSession();

  awaitable<void> run();
  // Graceful shutdown: close now if idle between statements; otherwise the
  // session ends after its current statement.
  void closeIfIdle();
  bool inTransaction() const { return txn_.inTransaction() || txn_.pendingBegin().has_value(); }
  uint32_t connectionId() const { return connection_id_; }
  const std::string& user() const { return user_; }
  bool idle() const { return idle_; }  // waiting for the client's next command
  bool pinned() const { return pinned_ != nullptr; }  // holds a backend connection between statements
  // This session as a row of the proxy's SHOW PROCESSLIST (session_processlist.cpp).
  ProcessRow processRow(bool full) const;
  BackendPool* pinnedPool() const { return pinned_ ? pinned_pool_ : nullptr; }  // where it came from
  // Since when it has waited, when idle(), and how long it may (the
  // session's wait_timeout, idle_timeout.hpp): the worker's sweep closes it after that.
  std::chrono::steady_clock::time_point idleSince() const { return client_.readStartedAt(); }
  std::chrono::seconds idleLimit() const { return idle_timeout_.limit(); }
  // Since when the session has waited for its client to take the bytes of
  // an answer (nullopt: not waiting); server.net_write_timeout_s bounds it.
  std::optional<std::chrono::steady_clock::time_point> writeWaitingSince() const {
    return client_.writeWaitingSince();
  }
  // KILL CONNECTION from another session (Worker::aimKill, on this worker's
  // thread): closes the client connection; the session ends after the
  // statement it may be running, which the killer interrupts on the backends.
  void kill();

 private:
  // client_handshake.cpp
  awaitable<bool> handshake();
  // The state of a new login (handshake, COM_CHANGE_USER): the client's
  // character set and database, the server's default status flags; the
  // server's ERR when the database does not exist.
  awaitable<std::optional<protocol::ErrPacket>> startSession(std::string names, std::string database);
  awaitable<bool> onChangeUser(protocol::ByteView payload);
  // dialect_ from the session's sql_mode and client charset (session_dialect.cpp).
  void updateDialect();
  // How the backends resolve this session's table names (session_dialect.cpp).
  routing::NameScope nameScope();

  // client_access.cpp: the ERR refusing `sql` for this user (statement
  // policy, private physical tables; docs/security.md), or nullopt.
  // `tokens`: tokenize(sql) under the default dialect when at hand, else empty.
  std::optional<protocol::ErrPacket> accessRefusal(std::string_view sql, std::span<const parser::Token> tokens = {});
  // MariaDB's 1044 when users[].allow_schemas leaves `database` out (login,
  // COM_INIT_DB, COM_CHANGE_USER), or nullopt.
  std::optional<protocol::ErrPacket> schemaRefusal(std::string_view database);
  std::string_view peerHost() const;  // the client's address without its port

  // client_session.cpp
  awaitable<bool> dispatch(protocol::ByteView payload);
  awaitable<bool> onQuery(protocol::ByteView payload);
  // statement_limits: before a COM_QUERY or COM_STMT_EXECUTE (session_admission.cpp):
  // the ticket to hold while it runs, or nullopt with the refusal queued.
  std::optional<StatementLimits::Ticket> admitStatement(protocol::ByteView payload);
  awaitable<bool> onExplainShards(std::string_view statement);
  // client_kill.cpp: KILL [CONNECTION | QUERY] n and COM_PROCESS_KILL.
  awaitable<bool> onKill(const parser::KillRequest& request);
  // A statement the backend connection's max_allowed_packet refuses
  // (session_route.cpp): answered as the server does, without sending it.
  bool exceedsServerPacketLimit(const BackendConnection& conn, size_t payload_bytes) const;
  awaitable<bool> refusePacketTooLarge();
  awaitable<bool> onProcessKill(protocol::ByteView payload);
  // SELECT CONNECTION_ID(): this session's id, typed as the server types it.
  awaitable<bool> sendConnectionId(const std::string& column, bool binary_rows = false);
  // Statements the session carries out itself, prepared (prepared_local.cpp).
  ClientStatement::Intercepted interceptedKind(std::string_view sql, const parser::StatementInfo& info,
                                               std::string& connection_id_column) const;
  awaitable<bool> executeIntercepted(const ClientStatement& stmt, const protocol::StmtExecute& exec);
  // PREPARE ... FROM of a KILL (its literal, or the user variable's value
  // read on the pinned connection): refused with 1295; of a SET of
  // session_track_*: refused with 1235.
  std::optional<protocol::ErrPacket> killPrepareRefusal(std::string_view prepared_text) const;
  // KILL inside PREPARE ... FROM '...', EXECUTE IMMEDIATE or a stored
  // program, for accounts the statement policy does not check (client_access.cpp).
  std::optional<protocol::ErrPacket> nestedKillRefusal(std::string_view sql) const;
  static protocol::ErrPacket nestedKillError();
  awaitable<std::optional<protocol::ErrPacket>> sqlPrepareRefusal(std::string_view sql);
  // What runOn sends: a command payload as is, or an execute of a prepared
  // statement whose physical SQL is prepared on the borrowed connection.
  // Where a statement on one shard-key value goes (session_admission.cpp).
  struct HotKeyTarget {
    std::string table;
    uint64_t value = 0;
    std::string shard;
    std::string backend;
    bool write = false;  // INSERT / UPDATE / DELETE / REPLACE
  };
  struct Outbound {
    protocol::ByteView payload;  // the client's command, sent as is
    std::string_view sql;        // else: a COM_QUERY of this (the statement rewritten for its shard)
    std::string execute_sql;
    const protocol::StmtExecute* execute = nullptr;
    // Parameters the client sent with COM_STMT_SEND_LONG_DATA (indexes into
    // `long_data`): forwarded the same way before the execute, never inlined
    // into it (each fits max_allowed_packet where their sum may not).
    std::vector<uint16_t> long_params;
    const std::vector<std::string>* long_data = nullptr;
    bool clear_diagnostics = false;  // reset the connection's diagnostics area first
    // A statement of a multi-statement packet run on its own with more to
    // follow: its response ends with SERVER_MORE_RESULTS_EXIST.
    bool more_results = false;
    // The statement's shard key ("table:value"; empty: none): its share of
    // the server's concurrency budget is counted per key (session_admission.cpp).
    std::string admission_key;
    // The statement's one shard-key value (session_admission.cpp): counted
    // for SHOW HOT KEYS, and a write to it takes a slot of the key
    // (overload.hot_key_concurrency) before the server's budget.
    std::optional<HotKeyTarget> hot_key;
  };
  // How runOn's statement ended: the sequence id after its response, and
  // whether it ended the command (an ERR, a lost backend): a multi-statement
  // packet stops there, as the server stops at a failing statement.
  struct RunOutcome {
    uint8_t next_seq = 0;
    bool stopped = true;
  };
  // binary_rows: the answer to a COM_STMT_EXECUTE.
  awaitable<bool> sendLocalResult(const LocalResult& result, bool binary_rows = false);
  // The statement's conditions into diagnostics_: its error, or its warnings
  // read with SHOW WARNINGS on `conn` (only when it had some).
  awaitable<void> recordDiagnostics(const ForwardResult& result, const parser::StatementInfo& info,
                                    BackendConnection& conn);
  // session_route.cpp: a statement, COM_INIT_DB and the other commands run on
  // one backend connection (route_execution.hpp forwards the answer).
  awaitable<bool> runOn(BackendPool& pool, const Outbound& out, const parser::StatementInfo& info);
  awaitable<bool> onInitDb(protocol::ByteView payload);
  // `target`: another backend than the default one (ignored when pinned).
  awaitable<bool> onPassthrough(protocol::ByteView payload, protocol::ResponseKind kind, bool sync_state,
                                BackendPool* target = nullptr);
  RunOutcome last_run_;  // of the latest runOn

  // multi_statement.cpp: a COM_QUERY holding several statements
  // (CLIENT_MULTI_STATEMENTS): each statement planned, the packet sent whole
  // when all go to one place, else run statement by statement.
  awaitable<bool> onMultiStatement(protocol::ByteView payload, std::string_view sql);
  awaitable<bool> runStatementByStatement(std::string_view sql);
  // The ERR refusing statement `index` (0-based) of a packet, or nullopt
  // with its target (an Outbound over `storage`) filled in.
  struct PacketStatement;
  awaitable<std::optional<protocol::ErrPacket>> planPacketStatement(PacketStatement& st);
  awaitable<std::unique_ptr<BackendConnection>> borrowFor(BackendPool& pool);

  // session_admission.cpp: the servers' concurrency budgets
  // (backend_admission.hpp). enterBudget: the statement's slot on `pool`'s
  // server (admitted, queued or refused); a statement of the transaction (or
  // LOCK TABLES, named locks) the session holds on that server passes the queue.
  AdmissionSlot enterBudget(BackendPool& pool, std::string_view key);
  // The ERR for a refused slot (9145, 9146, or 1317 when killed while waiting).
  protocol::ErrPacket admissionRefusal(const AdmissionSlot& slot, const BackendPool& pool) const;
  // One slot per server of `pools` (each server once, taken in name order so
  // that two statements never hold one each of what the other waits for);
  // nullopt after queueing the refusal.
  awaitable<std::optional<std::vector<AdmissionSlot>>> admitAll(const std::vector<BackendPool*>& pools,
                                                               std::string_view key = {});
  static std::string admissionKey(const routing::Plan& plan);
  // session_admission.cpp: hot keys (hot_key_gate.hpp, hot_key_tracker.hpp).
  // The admission key and hot-key target of a routed statement, for both
  // the text and the prepared path.
  void setKeyTargets(Outbound& out, const routing::Plan& plan, const parser::StatementInfo& info) const;
  // Counts the statement for SHOW HOT KEYS and, for a write, takes its key's
  // slot into `slot` (waiting FIFO behind the key's writes in flight), paced
  // first when overload.hot_key_max_per_second is set; false after queueing
  // the refusal (9147, 9148, 9149, or 1317 when killed while waiting).
  awaitable<bool> enterHotKey(const Outbound& out, HotKeySlot& slot);
  // Waits for the key's next turn (hot_key_pacer.hpp); false after queueing the refusal.
  awaitable<bool> paceHotKey(const std::string& key, const HotKeyTarget& target);
  // After the statement: a transaction keeps its key's slot until it ends
  // (hot_key_holds_.settle after each command), any other write gives it back.
  void afterHotKey(HotKeySlot& slot, bool transactional);
  protocol::ErrPacket hotKeyRefusal(const HotKeySlot& slot, const HotKeyTarget& target) const;
  // Where scatter targets run: each target's pool (a replica when the session
  // reads there), or nullopt after queueing the refusal.
  std::optional<std::vector<BackendPool*>> scatterPools(const routing::ScatterPlan& plan,
                                                        const parser::StatementInfo& info, std::string_view sql);

  // session_scatter.cpp: statements that span shards (scatter_execution.hpp runs them).
  // binary_rows: answer a COM_STMT_EXECUTE (binary result rows built from the
  // shards' text rows and the merged column definitions).
  // `sql`: the client's statement (replica reads decide on it; empty: primaries).
  awaitable<bool> runScatter(const routing::ScatterPlan& plan, const parser::StatementInfo& info,
                             bool binary_rows = false, std::string_view sql = {});
  std::optional<protocol::ErrPacket> scatterRefusal(const parser::StatementInfo& info) const;

  // catalog_executor.cpp: the logical catalog (routing/catalog.hpp) for
  // users without physical_tables / privileged.
  bool usesLogicalCatalog() const;
  std::optional<routing::CatalogPlan> catalogPlan(std::string_view sql, const parser::StatementInfo& info);
  awaitable<bool> runCatalog(const routing::CatalogPlan& plan, bool binary_rows = false);
  // DDL on a logical table (session_schema_change.cpp): nullopt when `sql`
  // is not one; else the change, or why the proxy refuses it.
  std::optional<std::expected<routing::LogicalDdl, std::string>> logicalDdl(std::string_view sql,
                                                                            const parser::StatementInfo& info);
  awaitable<bool> runSchemaChange(std::expected<routing::LogicalDdl, std::string> ddl);
  // `PREPARE s FROM '<catalog statement>'`: EXECUTE would run on a backend
  // and show the physical layout, so it is refused for logical-catalog users.
  std::optional<protocol::ErrPacket> catalogPrepareRefusal(std::string_view sql);
  // A prepared catalog statement runs as text (its bound names are rewritten
  // like literals); the rows go back as binary rows.
  awaitable<bool> executeCatalogAsText(const ClientStatement& stmt, const protocol::StmtExecute& exec);
  awaitable<std::expected<BackendConnection::TextResult, protocol::ErrPacket>> catalogQuery(BackendPool& pool,
                                                                                          const std::string& sql);

  // session_split_write.cpp: an INSERT / REPLACE split per shard
  // (routing::PlanKind::kMultiWrite; split_write_execution.hpp runs the parts).
  awaitable<bool> runMultiWrite(const routing::Plan& plan, const parser::StatementInfo& info);
  awaitable<bool> runMultiWriteParallel(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                        const parser::StatementInfo& info);
  awaitable<bool> runMultiWriteOnOne(const routing::Plan& plan, const std::vector<BackendPool*>& pools,
                                     const parser::StatementInfo& info);
  awaitable<std::expected<std::unique_ptr<BackendConnection>, std::string>> preparePartConnection(
      BackendPool& pool, const parser::StatementInfo& info);
  awaitable<bool> sendWriteOk(const protocol::OkPacket& sum);
  // client_prepared.cpp: a prepared statement that spans shards (or reads
  // the logical catalog), run as text; `runs_as_text_because` words why in
  // a refusal.
  std::expected<std::string, protocol::ErrPacket> inlineParameters(
      const std::string& sql, const protocol::StmtExecute& exec,
      std::string_view runs_as_text_because = "spans shards") const;
  awaitable<bool> executeScatterAsText(const std::string& sql, const parser::StatementInfo& info,
                                       const protocol::StmtExecute& exec, const routing::Plan& bound_plan);

  // client_prepared.cpp: the binary protocol (COM_STMT_*).
  awaitable<bool> onStmtPrepare(protocol::ByteView payload);
  awaitable<bool> onStmtExecute(protocol::ByteView payload);
  void onStmtSendLongData(protocol::ByteView payload);
  awaitable<bool> onStmtReset(protocol::ByteView payload);
  // prepared_diagnostics.cpp: SHOW WARNINGS and kin prepared, answered from diagnostics_.
  bool answersDiagnosticsLocally(std::string_view sql, const parser::StatementInfo& info) const;
  // A statement the session answers itself in both protocols: kept with a
  // new id, answered with a prepare OK announcing `announced`'s columns.
  awaitable<bool> prepareLocally(ClientStatement statement, const LocalResult& announced);
  awaitable<bool> prepareDiagnostics(std::string sql);
  // session_processlist.cpp: SHOW [FULL] PROCESSLIST and COM_PROCESS_INFO
  // answered with the proxy's sessions for users that are not `privileged`
  // (they get the servers' own list, as before).
  bool showsLogicalProcesslist(std::string_view sql, const parser::StatementInfo& info) const;
  awaitable<bool> onShowProcesslist(bool full, bool binary_rows);
  awaitable<bool> prepareProcesslist(std::string sql);
  awaitable<LocalResult> processList(bool full);
  // The rows this session's user may see (its own sessions), on every worker.
  awaitable<std::vector<ProcessRow>> visibleProcesses(bool full);
  // Not `privileged`: the proxy's sessions rather than the servers' threads.
  bool usesLogicalProcesslist() const;
  // session_processlist_select.cpp: SELECT ... FROM information_schema.PROCESSLIST
  // for the same users, run on a backend against a temporary table holding
  // the proxy's sessions. `exec`: a prepared statement's execute (binary rows).
  bool readsLogicalProcesslist(std::string_view sql, const parser::StatementInfo& info) const;
  std::optional<protocol::ErrPacket> processlistSelectRefusal(std::string_view sql, const parser::StatementInfo& info);
  // `PREPARE s FROM '<such a SELECT>'`: EXECUTE would run on a backend as written.
  std::optional<protocol::ErrPacket> processlistSqlPrepareRefusal(std::string_view sql);
  awaitable<bool> runProcesslistSelect(std::string_view sql, const parser::StatementInfo& info,
                                       const protocol::StmtExecute* exec);
  // GET DIAGNOSTICS CONDITION n outside the area (text and prepared): OK, 1758 added.
  awaitable<bool> sendInvalidConditionOk();
  awaitable<bool> executeDiagnostics(const ClientStatement& statement);
  void onStmtClose(protocol::ByteView payload);
  // catalog_executor.cpp: COM_FIELD_LIST, checked as SHOW COLUMNS and
  // pointed at a logical table's first physical table.
  awaitable<bool> onFieldList(protocol::ByteView payload);
  // client_session.cpp
  awaitable<bool> onResetConnection();
  awaitable<bool> onSetOption(protocol::ByteView payload);

  // session_reads.cpp: reads on replicas (docs/availability.md). The pool a
  // statement routed to `primary` reads from: a replica when the session (or
  // the statement's hint) wants one, the statement is a plain read outside
  // any transaction, and a replica is healthy and has the session's last
  // write there (waiting for it at most ha.causal_read_timeout_ms); else `primary`.
  // `tokens`: the statement's significant tokens (empty: lexed here if needed).
  awaitable<BackendPool*> readPool(BackendPool& primary, const parser::StatementInfo& info, std::string_view sql,
                                   std::span<const parser::Token> tokens);
  // The same without waiting (scatter reads): a replica only when it already
  // has the session's last write by the monitor's last probe.
  BackendPool* readPoolNow(BackendPool& primary, const parser::StatementInfo& info, std::string_view sql,
                           std::span<const parser::Token> tokens);
  struct ReplicaChoice {
    BackendPool* pool = nullptr;  // null: the primary serves
    std::optional<Gtid> wait_for;  // the replica's last probe had not seen it yet
  };
  ReplicaChoice chooseReplica(BackendPool& primary, const parser::StatementInfo& info, std::string_view sql,
                              std::span<const parser::Token> tokens);
  awaitable<bool> waitForGtid(BackendPool& replica, const Gtid& gtid);
  // SET [@@session.]shardproxy_reads = 'replica' | 'primary' | DEFAULT: the
  // session's own choice, answered here (never sent to a backend). nullopt:
  // the statement sets no such variable.
  std::optional<protocol::ErrPacket> readsSettingRefusal(const parser::StatementInfo& info) {
    return readsSetting(info, true);
  }
  bool setsReadsVariable(const parser::StatementInfo& info) const;
  // The same through COM_STMT_PREPARE / EXECUTE (a backend would refuse the
  // unknown variable at prepare). `apply`: false only checks.
  std::optional<protocol::ErrPacket> readsSetting(const parser::StatementInfo& info, bool apply);
  awaitable<bool> prepareReadsSetting(std::string sql, const parser::StatementInfo& info);
  awaitable<bool> executeReadsSetting(const ClientStatement& stmt);
  // After a statement on a primary that has replicas: what it wrote (read_your_writes.hpp).
  // Called once the session's transaction state has taken the answer in.
  void afterPrimaryStatement(BackendPool& pool, const parser::StatementInfo& info,
                             const protocol::SessionChanges& changes, bool tracked);

  // session_xa.cpp: a transaction over several backends (transactions.cross_backend:
  // atomic; docs/routing.md, "Transactions across backends"). Under atomic a
  // deferred plain BEGIN opens an XA branch of a new global id on its first
  // backend (the pinned connection); a statement routed to another backend
  // joins it there with XA START (one branch per backend); COMMIT is one- or
  // two-phase (proxy/exec/xa_commit.hpp); ROLLBACK, a branch the server ended
  // (deadlock) or lost rolls every branch back.
  struct XaBranch {
    BackendPool* pool = nullptr;
    std::unique_ptr<BackendConnection> conn;  // null while lent to a statement
    bool lent = false;
  };
  struct GlobalTransaction {
    std::string gtrid;
    BackendPool* first = nullptr;  // its branch is the pinned connection
    std::vector<XaBranch> others;
    bool savepoints = false;  // a SAVEPOINT ran while it had one branch
    bool aborted = false;     // a server ended a branch, or one was lost: roll back all
  };
  std::optional<GlobalTransaction> xa_;
  uint16_t rollback_warnings_ = 0;  // of the last global rollback (abortGlobal), for its OK
  // The statement opening the deferred transaction on `pool`: XA START of a
  // new global id (`gtrid` set) when atomic and the BEGIN is plain, else the BEGIN.
  std::string beginStatement(const BackendPool& pool, std::optional<std::string>& gtrid);
  bool joinsBranch(const BackendPool& pool) const { return xa_ && xa_->first && &pool != xa_->first; }
  awaitable<std::unique_ptr<BackendConnection>> borrowBranch(BackendPool& pool);
  // giveBack() of a branch's connection; false: not a lent branch connection.
  bool keepBranch(std::unique_ptr<BackendConnection>& conn, BackendPool& pool, std::optional<uint16_t> server_status);
  // What a global transaction refuses (savepoints across branches, COMMIT AND
  // CHAIN, multi-statement packets), or nullopt.
  std::optional<protocol::ErrPacket> globalRefusal(const parser::StatementInfo& info, std::string_view sql);
  awaitable<bool> finishGlobal(bool commit);
  // Commits (or rolls back) the global transaction without answering the
  // client: its error, or nullopt once it ended well (finishGlobal answers;
  // an implicit commit goes on to run its statement).
  awaitable<std::optional<protocol::ErrPacket>> endGlobal(bool commit);
  // Inside a global transaction: COMMIT / ROLLBACK ended here, a refused
  // statement answered; nullopt: run the statement (text and prepared alike).
  awaitable<std::optional<bool>> onGlobalStatement(const parser::StatementInfo& info, std::string_view sql);
  // XA ROLLBACK on every branch; connections back to their pools.
  awaitable<void> abortGlobal();

  // session_lending.cpp: borrowing and returning backend connections.
  awaitable<std::unique_ptr<BackendConnection>> borrow(BackendPool& pool, bool sync_state);
  // A connection from the pool even while the session holds a pinned one
  // (sends the ERR itself on failure); its state is not synchronised.
  awaitable<std::unique_ptr<BackendConnection>> borrowPooled(BackendPool& pool);
  // `server_status`: the status flags of the statement's response on `conn`;
  // nullopt when none was read (the session's transaction state stays as it was).
  void giveBack(std::unique_ptr<BackendConnection> conn, BackendPool& pool, std::optional<uint16_t> server_status);
  // COM_RESET_CONNECTION on the pinned connection (rolls back, clears its
  // state) and returns it to its pool; closes it if the reset fails.
  awaitable<void> releasePinned();
  // users[].max_pinned_connections (session_lending.cpp). Before a statement
  // that will make the session hold a connection between statements (a
  // transaction, user variables, temporary tables, locks): the ERR refusing
  // it when the user's pinned sessions hold their limit already, else
  // nullopt (a slot is reserved). syncPinSlot() afterwards keeps the slot
  // exactly while the session holds a connection (or a deferred BEGIN); a
  // pin nothing foretold (a procedure creating a temporary table) is
  // counted too, so the user's next one is refused.
  std::optional<protocol::ErrPacket> reservePin(const parser::StatementInfo& info);
  void syncPinSlot();
  void recordEffects(const parser::StatementInfo& info, BackendConnection& conn,
                     const protocol::SessionChanges& changes, bool changes_unreadable);
  // A statement while the session's transaction is lost (transaction_state.hpp):
  // answered here, or nullopt to run it.
  awaitable<std::optional<bool>> answerWhileLost(parser::StatementKind kind, bool multiple_statements);
  // The server status after a forwarded response: its own flags, or for an
  // ERR inside a transaction those of a `DO 0` (nullopt: unchanged).
  awaitable<std::optional<uint16_t>> statusAfter(const ForwardResult& result, BackendConnection& conn);
  // `timed_out`: backends[].query_timeout_ms passed (1969, as the server's max_statement_time says it).
  void reportBackendFailure(const BackendPool& pool, uint8_t seq, bool during_statement, bool timed_out = false);
  // A failure while preparing a connection for the statement (state sync, a
  // deferred BEGIN): the server's own ERR, or the lost backend, queued.
  void queuePreparationFailure(const BackendPool& pool, const BackendError& error);

  awaitable<bool> sendOk(uint8_t seq, uint16_t extra_status = 0, uint16_t warnings = 0);
  // The OK of a login or COM_CHANGE_USER: with the schema entry a server
  // sends a client that tracks it (session_tracking.cpp).
  awaitable<bool> sendLoginOk(uint8_t seq);

  // ---- session tracking for the client (session_tracking.cpp) ----
  // The client's settings when it negotiated CLIENT_SESSION_TRACK, else null.
  const protocol::TrackingSettings* clientTracking() const;
  // Refusal of a `SET session_track_...` the proxy cannot honour
  // (session_track_transaction_info other than OFF).
  std::optional<protocol::ErrPacket> trackingSetRefusal(const parser::StatementInfo& info) const;
  // After a `SET session_track_...` ran on `conn` with the client's settings
  // (trackingSettingsSql): when it succeeded (`succeeded`), the new settings
  // read back into tracking_, and the other session variables it set read
  // back as the changes to carry; then the connection's own tracking restored.
  awaitable<protocol::SessionChanges> adoptClientTracking(BackendConnection& conn, const parser::StatementInfo& info,
                                                          bool succeeded);
  // The held answer to it, to the client: its OK with the entries the new
  // settings select from `reported`.
  void sendTrackingSetAnswer(const TrackingSetAnswer& answer, const protocol::SessionChanges& reported);
  // A packet out of sequence: 1156 under `expected_seq`, as MariaDB answers it; the caller closes.
  awaitable<void> refuseOutOfOrder(uint8_t expected_seq);
  void queueError(uint8_t seq, const protocol::ErrPacket& err);
  uint16_t statusFlags() const;
  BackendPool& defaultPool();
  // What a backend connection must match to serve this session: the
  // semantic capability bits, and no database at all when it has none.
  uint32_t poolFlavour() const {
    return (capabilities_ & kFlavourMask) | (desired_.database.empty() ? kNoDatabase : 0) |
           ((mariadb_capabilities_ & protocol::mariadb_cap::kExtendedTypeInfo) ? kExtendedTypesFlavour : 0);
  }

  // Where a statement goes (routing.md): a pool and the SQL to send there
  // (empty = the client's text unchanged), or the ERR that refuses it.
  struct StatementTarget {
    BackendPool* pool = nullptr;
    std::string sql;
  };
  // `tokens`: the statement's default-dialect tokens when analysed (analysis_), else empty.
  routing::Plan planFor(std::string_view sql, const parser::StatementInfo& info,
                        std::span<const routing::ParamValue> params, std::span<const parser::Token> tokens = {});
  routing::Plan choosePlan(std::string_view sql, const parser::StatementInfo& info,
                           std::span<const routing::ParamValue> params, std::span<const parser::Token> tokens);
  void beginRecord(protocol::ByteView payload);
  // `metadata_only`: a COM_STMT_PREPARE, which reads metadata and changes
  // nothing, may go to another backend than the session's pinned one.
  std::variant<StatementTarget, protocol::ErrPacket> resolve(const routing::Plan& plan, std::string_view sql,
                                                            const parser::StatementInfo& info,
                                                            bool metadata_only = false);
  // The map this statement plans against: a transaction keeps the snapshot it started with.
  std::shared_ptr<const routing::CompiledShardMap> mapSnapshot();
  // planFor, then for a write to keys an online move holds, the wait for its
  // cut-over (session_write_hold.cpp): the plan, re-made against the new map
  // when the map switched meanwhile, or the refusal past the hold's bounds.
  // `planned`: the first plan when the caller made it already (planFor).
  awaitable<std::variant<routing::Plan, protocol::ErrPacket>> planWrite(
      std::string_view sql, const parser::StatementInfo& info, std::span<const routing::ParamValue> params,
      std::span<const parser::Token> tokens = {}, bool record = true,
      std::optional<routing::Plan> planned = std::nullopt);
  // False when no write hold can apply to `plan` (not a row write, or no
  // sharded table): its caller skips planWrite's coroutine, one frame
  // allocation per statement.
  static bool writeMayBeHeld(const parser::StatementInfo& info, const routing::Plan& plan);

  Worker& worker_;
  PacketStream client_;
  uint32_t connection_id_;
  uint32_t capabilities_ = 0;  // negotiated with the client
  uint32_t mariadb_capabilities_ = 0;  // MariaDB extended capabilities negotiated with the client
  uint8_t reply_seq_ = 1;      // sequence id of the first packet answering the current command
  std::string user_;
  std::optional<HostConnectionLimiter::Slot> user_slot_;  // users[].max_connections, held while logged in
  std::optional<HostConnectionLimiter::Slot> pin_slot_;   // users[].max_pinned_connections, held while pinned
  std::string peer_;
  std::string scramble_;  // of the greeting; COM_CHANGE_USER is answered against it
  SessionState desired_;
  SessionState initial_;
  uint16_t initial_status_ = TransactionState::kDefaultStatus;  // a fresh backend connection's status flags

  std::unique_ptr<BackendConnection> pinned_;
  BackendPool* pinned_pool_ = nullptr;
  // Transaction, autocommit and escaping flags as the server reports them;
  // a BEGIN not yet sent (it goes to the backend of the transaction's first
  // statement); a transaction lost with its connection.
  TransactionState txn_;
  SessionDiagnostics diagnostics_;  // what SHOW WARNINGS shows of the previous statement
  // How the server reads this session's statements: its sql_mode (the server's
  // default until the session changes it), client charset, server version.
  parser::Dialect dialect_;
  std::string server_sql_mode_;
  uint32_t server_version_ = parser::kDefaultServerVersion;
  bool names_case_sensitive_ = false;  // the backends' lower_case_table_names is 0
  std::shared_ptr<const routing::CompiledShardMap> transaction_map_;
  uint64_t planned_map_version_ = 0;  // of the map the latest plan was made with
  SessionWriteGate write_gate_;       // tickets of writes to keys an online move watches
  ClientStatements statements_;
  // The current COM_QUERY's analysis (parser/analysis.hpp); kept to reuse its buffers.
  parser::StatementAnalysis analysis_;
  // LAST_INSERT_ID() of this session and the backend connection holding it
  // (session_last_insert_id.hpp).
  SessionLastInsertId last_insert_id_;
  // The global-variables epoch of the login (global_defaults.hpp): pooled
  // connections that started before it are reset when borrowed.
  uint64_t globals_epoch_ = 0;
  ConnectionBoundState bound_;  // state that lives on one connection: keep it for the session
  bool tables_locked_ = false; // LOCK TABLES until UNLOCK TABLES
  bool idle_ = false;
  // The command running now (valid while !idle_, read on this thread only)
  // and since when (SHOW PROCESSLIST; idle: client_.readStartedAt()).
  protocol::ByteView current_command_;
  std::chrono::steady_clock::time_point state_since_ = std::chrono::steady_clock::now();
  bool counted_in_transaction_ = false;
  IdleTimeout idle_timeout_;  // this session's wait_timeout
  bool counted_tls_ = false;  // in ProxyContext::tls_sessions
  // What the current statement did, for metrics, digests and the slow-query
  // log (statement_observer.hpp); inactive when none of them is configured.
  StatementRecord record_;
  // Reads on replicas: the session's SET shardproxy_reads (nullopt: the
  // user's `reads`), its writes per backend, and the next replica to try.
  std::optional<conf::ReadTarget> reads_override_;
  // The client's session_track_* settings (what its OK packets report).
  protocol::TrackingSettings tracking_;
  ReadYourWrites read_your_writes_;
  uint32_t replica_turn_ = 0;
  // The wait of the statement running now for its server's budget: KILL QUERY ends it.
  AdmissionWait admission_wait_;
  HotKeyHolds hot_key_holds_;  // the key slots the session's transaction keeps

 public:
  // KILL [QUERY] from another session (Worker::aimKill, on this worker's
  // thread): a statement waiting for its server's budget stops waiting (1317).
  void interruptAdmission() { admission_wait_.interrupt(); }
};

}  // namespace sp::proxy
