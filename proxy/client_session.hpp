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
#include "proxy/client_statements.hpp"
#include "proxy/host_limits.hpp"
#include "routing/plan.hpp"
#include "routing/shard_map.hpp"
#include "protocol/response_tracker.hpp"
#include "proxy/backend_connection.hpp"
#include "proxy/metrics.hpp"
#include "proxy/packet_stream.hpp"
#include "proxy/route_execution.hpp"
#include "proxy/session_state.hpp"
#include "proxy/local_result.hpp"
#include "proxy/session_diagnostics.hpp"
#include "proxy/transaction_state.hpp"

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
  // Since when it has waited, when idle() (server.wait_timeout_s: worker.cpp).
  std::chrono::steady_clock::time_point idleSince() const { return client_.readStartedAt(); }
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

  // client_access.cpp: the ERR refusing `sql` for this user (statement
  // policy, private physical tables; docs/security.md), or nullopt.
  // `tokens`: tokenize(sql) under the default dialect when at hand, else empty.
  std::optional<protocol::ErrPacket> accessRefusal(std::string_view sql, std::span<const parser::Token> tokens = {});

  // client_session.cpp
  awaitable<bool> dispatch(protocol::ByteView payload);
  awaitable<bool> onQuery(protocol::ByteView payload);
  awaitable<bool> onExplainShards(std::string_view statement);
  // client_kill.cpp: KILL [CONNECTION | QUERY] n and COM_PROCESS_KILL.
  awaitable<bool> onKill(const parser::KillRequest& request);
  awaitable<bool> onProcessKill(protocol::ByteView payload);
  // SELECT CONNECTION_ID(): this session's id, typed as the server types it.
  awaitable<bool> sendConnectionId(const std::string& column);
  // What runOn sends: a command payload as is, or an execute of a prepared
  // statement whose physical SQL is prepared on the borrowed connection.
  struct Outbound {
    protocol::ByteView payload;  // the client's command, sent as is
    std::string_view sql;        // else: a COM_QUERY of this (the statement rewritten for its shard)
    std::string execute_sql;
    const protocol::StmtExecute* execute = nullptr;
    bool clear_diagnostics = false;  // reset the connection's diagnostics area first
  };
  awaitable<bool> sendLocalResult(const LocalResult& result);
  // The statement's conditions into diagnostics_: its error, or its warnings
  // read with SHOW WARNINGS on `conn` (only when it had some).
  awaitable<void> recordDiagnostics(const ForwardResult& result, const parser::StatementInfo& info,
                                    BackendConnection& conn);
  // session_route.cpp: a statement, COM_INIT_DB and the other commands run on
  // one backend connection (route_execution.hpp forwards the answer).
  awaitable<bool> runOn(BackendPool& pool, const Outbound& out, const parser::StatementInfo& info);
  awaitable<bool> onInitDb(protocol::ByteView payload);
  awaitable<bool> onPassthrough(protocol::ByteView payload, protocol::ResponseKind kind, bool sync_state);
  awaitable<std::unique_ptr<BackendConnection>> borrowFor(BackendPool& pool);

  // `SELECT LAST_INSERT_ID(n)`: re-establishes the session's insert id on a connection.
  std::string lastInsertIdRestore() const { return "SELECT LAST_INSERT_ID(" + std::to_string(last_insert_id_) + ")"; }

  // session_scatter.cpp: statements that span shards (scatter_execution.hpp runs them).
  // binary_rows: answer a COM_STMT_EXECUTE (binary result rows built from the
  // shards' text rows and the merged column definitions).
  awaitable<bool> runScatter(const routing::ScatterPlan& plan, bool binary_rows = false);

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
  // client_prepared.cpp: a prepared statement that spans shards, run as text.
  std::expected<std::string, protocol::ErrPacket> inlineParameters(const std::string& sql,
                                                                  const protocol::StmtExecute& exec) const;
  awaitable<bool> executeScatterAsText(const std::string& sql, const parser::StatementInfo& info,
                                       const protocol::StmtExecute& exec, const routing::Plan& bound_plan);

  // client_prepared.cpp: the binary protocol (COM_STMT_*).
  awaitable<bool> onStmtPrepare(protocol::ByteView payload);
  awaitable<bool> onStmtExecute(protocol::ByteView payload);
  void onStmtSendLongData(protocol::ByteView payload);
  awaitable<bool> onStmtReset(protocol::ByteView payload);
  void onStmtClose(protocol::ByteView payload);
  // client_session.cpp
  awaitable<bool> onResetConnection();
  awaitable<bool> onSetOption(protocol::ByteView payload);

  // session_lending.cpp: borrowing and returning backend connections.
  awaitable<std::unique_ptr<BackendConnection>> borrow(BackendPool& pool, bool sync_state);
  // `server_status`: the status flags of the statement's response on `conn`;
  // nullopt when none was read (the session's transaction state stays as it was).
  void giveBack(std::unique_ptr<BackendConnection> conn, BackendPool& pool, std::optional<uint16_t> server_status);
  // COM_RESET_CONNECTION on the pinned connection (rolls back, clears its
  // state) and returns it to its pool; closes it if the reset fails.
  awaitable<void> releasePinned();
  void recordEffects(const parser::StatementInfo& info, BackendConnection& conn,
                     const protocol::SessionChanges& changes, bool changes_unreadable);
  // A statement while the session's transaction is lost (transaction_state.hpp):
  // answered here, or nullopt to run it.
  awaitable<std::optional<bool>> answerWhileLost(parser::StatementKind kind, bool multiple_statements);
  // The server status after a forwarded response: its own flags, or for an
  // ERR inside a transaction those of a `DO 0` (nullopt: unchanged).
  awaitable<std::optional<uint16_t>> statusAfter(const ForwardResult& result, BackendConnection& conn);
  void reportBackendFailure(const BackendPool& pool, uint8_t seq, bool during_statement);
  // A failure while preparing a connection for the statement (state sync, a
  // deferred BEGIN): the server's own ERR, or the lost backend, queued.
  void queuePreparationFailure(const BackendPool& pool, const BackendError& error);

  awaitable<bool> sendOk(uint8_t seq, uint16_t extra_status = 0);
  void queueError(uint8_t seq, const protocol::ErrPacket& err);
  uint16_t statusFlags() const;
  BackendPool& defaultPool();
  // What a backend connection must match to serve this session: the
  // semantic capability bits, and no database at all when it has none.
  uint32_t poolFlavour() const {
    return (capabilities_ & kFlavourMask) | (desired_.database.empty() ? kNoDatabase : 0);
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

  Worker& worker_;
  PacketStream client_;
  uint32_t connection_id_;
  uint32_t capabilities_ = 0;  // negotiated with the client
  uint8_t reply_seq_ = 1;      // sequence id of the first packet answering the current command
  std::string user_;
  std::optional<HostConnectionLimiter::Slot> user_slot_;  // users[].max_connections, held while logged in
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
  std::shared_ptr<const routing::CompiledShardMap> transaction_map_;
  ClientStatements statements_;
  // The current COM_QUERY's analysis (parser/analysis.hpp); kept to reuse its buffers.
  parser::StatementAnalysis analysis_;
  // LAST_INSERT_ID() of this session: the backend connection that generated
  // it may be lent to someone else, so it is re-established (SELECT
  // LAST_INSERT_ID(n)) on the connection of a statement that reads it.
  uint64_t last_insert_id_ = 0;
  bool sticky_ = false;        // state that lives on one connection: keep it for the session
  bool tables_locked_ = false; // LOCK TABLES until UNLOCK TABLES
  bool idle_ = false;
  bool counted_in_transaction_ = false;
  // What the current statement did, for metrics, digests and the slow-query
  // log (statement_observer.hpp); inactive when none of them is configured.
  StatementRecord record_;
};

}  // namespace sp::proxy
