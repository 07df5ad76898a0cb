// A ClientSession's statements and commands that run on one backend
// connection: the session lends the connection (its own pinned one, or one
// borrowed and brought to the session's state), prepares what the session's
// state needs there (a deferred BEGIN, an empty diagnostics area, its
// LAST_INSERT_ID, the physical prepared statement), hands the command to the
// route execution (route_execution.hpp), and takes the answer's effects into
// the session's state before giving the connection back.
#include "protocol/constants.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/generic_packets.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/backend_shard_channel.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/exec/route_execution.hpp"
#include "proxy/session/local_infile.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

// COM_STMT_SEND_LONG_DATA to the backend statement, as the client sent it
// to the proxy: no response, queued ahead of the execute that follows (one
// flush). Pieces fit the connection's max_allowed_packet (the server
// concatenates them); an empty value is one empty piece, so the parameter
// still counts as long data.
void queueLongData(BackendConnection& conn, uint32_t statement_id, const std::vector<uint16_t>& params,
                   const std::vector<std::string>& data) {
  constexpr size_t kHeader = 1 + 4 + 2;
  constexpr size_t kMaxPiece = (16u << 20) - 1 - kHeader;  // one wire packet
  const uint64_t limit = conn.maxAllowedPacket();
  const size_t piece = std::max<size_t>(4096, std::min<uint64_t>(kMaxPiece, limit > 2048 ? limit - 1024 : kMaxPiece));
  for (uint16_t param : params) {
    std::string_view value = param < data.size() ? std::string_view(data[param]) : std::string_view();
    size_t offset = 0;
    do {
      protocol::Bytes packet;
      protocol::encode(protocol::StmtSendLongData{statement_id, param, value.substr(offset, piece)}, packet);
      conn.stream().append(packet, 0);
      offset += piece;
    } while (offset < value.size());
  }
}

}  // namespace

using protocol::Command;
namespace status = protocol::status;

awaitable<bool> ClientSession::runOn(BackendPool& pool, const Outbound& out, const parser::StatementInfo& info) {
  last_run_ = RunOutcome{};
  // Only a LOAD DATA LOCAL statement looks the account up (not every
  // statement): a file request for any other statement is refused anyway.
  bool infile_allowed = false;
  if (info.load_data_local) {
    const conf::UserAccount* account = worker_.context().config().findUser(user_);
    const bool user_may = account && account->local_infile;
    infile_allowed = user_may && (capabilities_ & protocol::cap::kLocalFiles);
    if (!infile_allowed) {
      // Refused before the server sees it, with the server's own answer to a
      // client that does not send files.
      queueError(reply_seq_, client_error::make(client_error::kLocalInfileDisabled,
          "The used command is not allowed because the MariaDB server or client has disabled the local infile "
          "capability (shardproxy: " + std::string(user_may
              ? "the client did not offer CLIENT_LOCAL_FILES; enable local infile in the client"
              : "users[].local_infile is off for this user") + ")"));
      co_return co_await client_.flush();
    }
  }
  // SET session_track_...: the client's own settings (session_tracking.hpp).
  const bool tracking_set = setsTrackingVariable(info);
  if (tracking_set) {
    if (auto refused = trackingSetRefusal(info)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
  }
  // A write to one key value: a slot of its key first (session_admission.cpp),
  // so a write waiting behind a hot key holds none of the server's slots.
  const bool transactional = txn_.transactional();
  HotKeySlot key_slot;
  if (!co_await enterHotKey(out, key_slot)) co_return co_await client_.flush();
  // The server's concurrency budget (session_admission.cpp): a slot before
  // a connection, so a waiting statement holds none; given back once the
  // answer is read, or by the slot's destructor on every other path.
  AdmissionSlot slot = enterBudget(pool, out.admission_key);
  if (slot.state() == AdmissionSlot::State::kQueued) co_await worker_.context().admissions.wait(slot, &admission_wait_);
  if (!slot.admitted()) {
    queueError(reply_seq_, admissionRefusal(slot, pool));
    co_return co_await client_.flush();
  }
  if (auto refused = reservePin(info)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  // A statement of a global transaction on another backend runs on that backend's branch.
  // (Not a conditional expression: GCC 12 miscompiles co_await in its operands.)
  std::unique_ptr<BackendConnection> conn;
  if (joinsBranch(pool)) conn = co_await borrowBranch(pool);
  else conn = co_await borrowFor(pool);
  if (!conn) {
    syncPinSlot();  // the reservation, when nothing ran
    co_return true;
  }
  if (txn_.pendingBegin()) {
    std::optional<std::string> gtrid;  // set when the transaction opens as an XA branch (session_xa.cpp)
    const std::string begin = beginStatement(pool, gtrid);  // a named string: it outlives the suspension
    auto r = co_await conn->command(Command::kQuery, begin);
    txn_.clearPendingBegin();
    if (gtrid && r) xa_.emplace(GlobalTransaction{*gtrid, &pool});
    if (gtrid && !r) worker_.context().xa.finish(*gtrid);
    if (!r) {
      queuePreparationFailure(pool, r.error());
      co_await client_.flush();
      giveBack(std::move(conn), pool, std::nullopt);
      co_return true;
    }
    // The transaction is open from here: losing the connection loses it.
    txn_.onServerStatus(r->status_flags);
  }
  if (tracking_set) {
    // The client's settings first: its SET runs against them (session_tracking.hpp).
    auto r = co_await conn->command(Command::kQuery, trackingSettingsSql(tracking_));
    if (!r) {
      queuePreparationFailure(pool, r.error());
      co_await client_.flush();
      giveBack(std::move(conn), pool, std::nullopt);
      co_return true;
    }
  }
  if (out.clear_diagnostics) {
    // Only a statement naming a table resets the server's diagnostics area
    // (DO 0 or COMMIT leave it as they found it); this one names a table every
    // account can read and returns nothing.
    constexpr std::string_view kResetDiagnostics = "DO (SELECT 1 FROM information_schema.CHARACTER_SETS LIMIT 0)";
    if (!co_await conn->command(Command::kQuery, kResetDiagnostics)) {
      reportBackendFailure(pool, reply_seq_, false);
      giveBack(std::move(conn), pool, std::nullopt);
      co_return co_await client_.flush();
    }
  }
  if (auto restore = info.uses_last_insert_id ? last_insert_id_.restoreFor(conn->loan()) : std::nullopt) {
    auto r = co_await conn->command(Command::kQuery, *restore);
    if (!r) {
      reportBackendFailure(pool, reply_seq_, false);
      giveBack(std::move(conn), pool, std::nullopt);
      co_return co_await client_.flush();
    }
    last_insert_id_.onRestored(conn->loan());
  }
  if (!out.execute && exceedsServerPacketLimit(*conn, out.sql.empty() ? out.payload.size() : 1 + out.sql.size())) {
    giveBack(std::move(conn), pool, std::nullopt);
    co_return co_await refusePacketTooLarge();
  }
  // backends[].query_timeout_ms (0: none): a statement whose answer stops
  // coming for that long is ended and the server's query killed.
  BackendShardChannel channel(*conn, pool.config(), std::chrono::milliseconds(pool.config().query_timeout_ms));
  PacketStreamSink client_sink(client_, clientTracking());
  TrackingSetAnswer held;  // a tracking SET's answer waits for the settings it made
  ClientSink& client = tracking_set ? static_cast<ClientSink&>(held) : client_sink;
  const auto& limits = worker_.context().config();
  SessionInfileSource infile(client_, infile_allowed, limits.limits.local_infile_max_bytes,
                             std::chrono::seconds(limits.server.net_read_timeout_s));
  ForwardResult result;
  const uint16_t more = out.more_results ? status::kMoreResultsExist : 0;
  const bool changes_globals = changesGlobalDefaults(info);
  if (changes_globals) advanceGlobalsEpoch();  // and again once answered: global_defaults.hpp
  if (out.execute) {
    // The physical statement, prepared on this connection the first time it is used.
    auto stmt = co_await conn->prepared(out.execute_sql);
    if (!stmt) {
      if (stmt.error().kind == BackendError::Kind::kServer) {
        queueError(reply_seq_, stmt.error().toErrPacket());
      } else {
        reportBackendFailure(pool, reply_seq_, true);
      }
      giveBack(std::move(conn), pool, std::nullopt);
      co_return co_await client_.flush();
    }
    protocol::Bytes execute;
    protocol::StmtExecute bound = protocol::retarget(*out.execute, stmt->id);
    for (uint16_t i : out.long_params) bound.values[i] = protocol::LongDataValue{};
    if (!protocol::encode(bound, execute)) {
      queueError(reply_seq_, client_error::make(client_error::kMalformedPacket, "shardproxy: cannot encode parameters"));
      giveBack(std::move(conn), pool, std::nullopt);
      co_return co_await client_.flush();
    }
    if (exceedsServerPacketLimit(*conn, execute.size())) {
      giveBack(std::move(conn), pool, std::nullopt);
      co_return co_await refusePacketTooLarge();
    }
    if (out.long_data) queueLongData(*conn, stmt->id, out.long_params, *out.long_data);
    result = co_await routeCommand(channel, execute, protocol::ResponseKind::kQuery, client, capabilities_, reply_seq_,
                                   more);
  } else if (!out.sql.empty()) {
    result = co_await routeQuery(channel, out.sql, client, capabilities_, reply_seq_, more, &infile);
  } else {
    result = co_await routeCommand(channel, out.payload, protocol::ResponseKind::kQuery, client, capabilities_,
                                   reply_seq_, more, &infile);
  }
  slot.release();
  afterHotKey(key_slot, transactional);
  if (changes_globals) {
    advanceGlobalsEpoch();
    if (!result.server_error && changesConnectLimits(info)) markConnectLimitsChanged();
  }
  last_run_ = {result.next_client_seq, result.server_error || result.backend_failed || result.client_failed};
  record_.onResponse(result.rows, result.server_error ? result.error_code : 0);
  if (result.client_failed) {
    giveBack(std::move(conn), pool, std::nullopt);
    co_return false;
  }
  if (result.infile_over_limit) {
    std::string msg = fmt::format("shardproxy: the LOAD DATA LOCAL file passed limits.local_infile_max_bytes ({} "
                                  "bytes): its connection to backend {} was cut, so the server aborted the statement "
                                  "(InnoDB rolls it back; a non-transactional table keeps the rows loaded before)",
                                  limits.limits.local_infile_max_bytes, pool.config().name);
    if (txn_.inTransaction()) msg += "; the transaction was lost with it: every statement is refused until ROLLBACK";
    queueError(result.next_client_seq, client_error::make(client_error::kLocalInfileTooLarge, msg));
    giveBack(std::move(conn), pool, std::nullopt);
    co_return co_await client_.flush();
  }
  if (result.backend_failed) {
    reportBackendFailure(pool, result.next_client_seq, true, result.timed_out);
    giveBack(std::move(conn), pool, std::nullopt);
    co_return co_await client_.flush();
  }
  if (tracking_set) {
    // The server reported the statement as the client's settings select;
    // the session's state is read back instead (session_tracking.hpp).
    if (!info.reads_diagnostics) co_await recordDiagnostics(result, info, *conn);
    auto carried = co_await adoptClientTracking(*conn, info, !result.server_error);
    if (!result.server_error) recordEffects(info, *conn, carried, false);
    sendTrackingSetAnswer(held, result.changes);
  } else {
    if (!result.server_error || info.multiple_statements) {
      recordEffects(info, *conn, result.changes, result.changes_unreadable);
    }
    if (!info.reads_diagnostics) co_await recordDiagnostics(result, info, *conn);
  }
  auto server_status = co_await statusAfter(result, *conn);
  if (server_status) {
    carryAutocommit(*server_status & status::kAutocommit, initial_status_ & status::kAutocommit, desired_,
                    conn->applied());
  }
  last_insert_id_.afterStatement(conn->loan(), result.last_insert_id);
  const bool tracked = conn->tracksSession();
  giveBack(std::move(conn), pool, server_status);
  // A server ended a branch of the global transaction (a deadlock): every branch rolls back now.
  if (xa_ && xa_->aborted) co_await abortGlobal();
  // Only primaries list replicas (replica pools have none): nothing to note otherwise.
  if (!pool.config().replicas.empty()) afterPrimaryStatement(pool, info, result.changes, tracked);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::onInitDb(protocol::ByteView payload) {
  std::string db(protocol::decodeComInitDb(payload)->schema);  // dispatch() saw its command byte
  if (auto refused = schemaRefusal(db)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  BackendPool& pool = pinned_pool_ ? *pinned_pool_ : defaultPool();
  auto conn = co_await borrow(pool, false);
  if (!conn) co_return true;
  BackendShardChannel channel(*conn, pool.config());
  PacketStreamSink client(client_, clientTracking());
  auto result = co_await routeCommand(channel, payload, protocol::ResponseKind::kQuery, client, capabilities_, reply_seq_);
  if (result.client_failed) {
    giveBack(std::move(conn), pool, std::nullopt);
    co_return false;
  }
  std::optional<uint16_t> server_status;
  if (result.backend_failed) {
    reportBackendFailure(pool, result.next_client_seq, true);
  } else {
    if (!result.server_error) {
      desired_.database = db;
      conn->applied().database = db;
    }
    server_status = co_await statusAfter(result, *conn);
  }
  giveBack(std::move(conn), pool, server_status);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::onPassthrough(protocol::ByteView payload, protocol::ResponseKind kind, bool sync_state,
                                             BackendPool* target) {
  BackendPool& pool = pinned_pool_ ? *pinned_pool_ : target ? *target : defaultPool();
  auto conn = co_await borrow(pool, sync_state);
  if (!conn) co_return true;
  BackendShardChannel channel(*conn, pool.config());
  PacketStreamSink client(client_, clientTracking());
  auto result = co_await routeCommand(channel, payload, kind, client, capabilities_, reply_seq_);
  if (result.client_failed) {
    giveBack(std::move(conn), pool, std::nullopt);
    co_return false;
  }
  if (result.backend_failed) reportBackendFailure(pool, result.next_client_seq, true);
  std::optional<uint16_t> flags;
  if (kind == protocol::ResponseKind::kQuery && !result.backend_failed) flags = co_await statusAfter(result, *conn);
  giveBack(std::move(conn), pool, flags);
  co_return co_await client_.flush();
}

bool ClientSession::exceedsServerPacketLimit(const BackendConnection& conn, size_t payload_bytes) const {
  // MariaDB refuses a command whose payload (command byte included) reaches
  // max_allowed_packet (net_serv.cc: length >= max_packet_size). Checked here
  // because the server, refusing, closes the connection while the statement
  // is still being written, and the proxy would see a lost backend instead.
  const uint64_t limit = conn.maxAllowedPacket();
  return limit != 0 && payload_bytes >= limit;
}

awaitable<bool> ClientSession::refusePacketTooLarge() {
  // The server's answer, and like the server the connection ends with it.
  queueError(reply_seq_, client_error::make(client_error::kPacketTooLarge,
                                            "Got a packet bigger than 'max_allowed_packet' bytes"));
  co_await client_.flush();
  co_return false;
}

}  // namespace sp::proxy
