// Connection phase of a client session: greeting, login, authentication.
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/handshake.hpp"
#include "proxy/observe/abuse_log.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_certificate.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/net/login_deadline.hpp"
#include "proxy/session/server_handshake.hpp"
#include "proxy/net/tls_contexts.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

// MariaDB's answer at max_user_connections (users[].max_connections), at
// login and at COM_CHANGE_USER alike.
protocol::ErrPacket tooManyUserConnections(const std::string& user) {
  return client_error::make(client_error::kTooManyUserConnections,
                            fmt::format("User {} already has more than 'max_user_connections' active connections",
                                        user));
}

// The status bits a session inherits from the server's defaults.
constexpr uint16_t kCarriedStatus = protocol::status::kAutocommit | protocol::status::kNoBackslashEscapes |
                                    protocol::status::kAnsiQuotes;

}  // namespace

awaitable<bool> ClientSession::handshake() {
  auto& ctx = worker_.context();
  const auto& server = ctx.config().server;
  LoginDeadline deadline(client_, std::chrono::milliseconds(server.handshake_timeout_ms));
  // Nobody is authenticated yet: accept only packets a login needs.
  client_.setMaxMessageBytes(std::min(server.max_handshake_packet_bytes, server.max_packet_bytes));
  LoginRequest request{connection_id_, ctx.server_version, &ctx.config().users, peer_, ctx.tls ? ctx.tls->current() : nullptr};
  auto login = co_await acceptLogin(client_, request);
  if (deadline.expired()) {
    ctx.handshake_timeouts.fetch_add(1, std::memory_order_relaxed);
    noteAbuse(AbuseKind::kHandshakeTimeout, fmt::format("connection {} from {}", connection_id_, peer_));
    co_return false;
  }
  if (!login) {
    if (login.error() == LoginFailure::kTlsFailed) ctx.tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    if (login.error() == LoginFailure::kTooLarge) {
      ctx.handshake_too_large.fetch_add(1, std::memory_order_relaxed);
      noteAbuse(AbuseKind::kHandshakeTooLarge, fmt::format("connection {} from {}", connection_id_, peer_));
    }
    co_return false;
  }
  client_.setMaxMessageBytes(server.max_packet_bytes);
  if (client_.isTls()) {
    counted_tls_ = true;
    ctx.tls_sessions.fetch_add(1, std::memory_order_relaxed);
  }
  capabilities_ = login->capabilities;
  mariadb_capabilities_ = login->mariadb_capabilities;
  scramble_ = std::move(login->scramble);
  user_ = login->account->name;
  uint8_t seq = login->next_seq;
  auto user_slot = ctx.users.tryAcquire(user_, login->account->max_connections);
  if (!user_slot) {
    // MariaDB's answer at max_user_connections, after authentication.
    ctx.refused_per_user.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("connection {}: user '{}' already has {} sessions (users[].max_connections)", connection_id_,
                 user_, login->account->max_connections);
    queueError(seq, tooManyUserConnections(user_));
    co_await client_.flush();
    co_return false;
  }
  user_slot_.emplace(std::move(*user_slot));
  std::string db = login->database.empty() ? login->account->default_database : login->database;
  if (auto refused = co_await startSession(namesForCollation(login->collation), db)) {
    queueError(seq, *refused);
    co_await client_.flush();
    co_return false;
  }
  const std::string subject = clientCertificateSubject(client_);
  spdlog::debug("session {} user {} from {} logged in (db '{}'{}{}{}{})", connection_id_, user_, peer_, db,
                client_.isTls() ? ", " : "", client_.tlsDescription(),
                subject.empty() ? "" : ", client certificate ", subject);
  const bool ok = co_await sendLoginOk(seq);
  co_return ok && !deadline.expired();
}

awaitable<std::optional<protocol::ErrPacket>> ClientSession::startSession(std::string names, std::string database) {
  desired_ = SessionState{};
  desired_.names = std::move(names);
  desired_.database = std::move(database);
  initial_ = desired_;
  initial_status_ = TransactionState::kDefaultStatus;
  tracking_ = worker_.context().tracking_defaults;
  idle_timeout_.onLogin(worker_.context().config().server, capabilities_ & protocol::cap::kInteractive);
  if (auto refused = schemaRefusal(desired_.database)) co_return refused;
  // A backend connection brought to the session's state tells the status
  // flags the session starts with (autocommit and NO_BACKSLASH_ESCAPES follow
  // the server's global defaults); like MySQL, a login to a database that
  // does not exist is refused. A backend that is down does not block the
  // login: statements will report it.
  std::optional<protocol::ErrPacket> refusal;
  globals_epoch_ = currentGlobalsEpoch();
  auto acquired = co_await defaultPool().acquire(poolFlavour(), connection_id_);
  if (acquired) {
    auto conn = std::move(*acquired);
    std::expected<void, BackendError> r;
    if (!co_await refreshGlobalDefaults(*conn, globals_epoch_)) {
      r = std::unexpected(BackendError{BackendError::Kind::kIo, 0, "", "reset failed"});
    } else {
      // The session keeps the sql_mode it starts with (the server's global
      // default as this connection read it), as a server session does: every
      // connection it borrows later, one opened before or after a SET GLOBAL
      // sql_mode, is brought to it, so the proxy and the server read its
      // statements alike (COM_RESET_CONNECTION returns to it too).
      // (defaultSqlMode(): read when the connection opened or was last reset,
      // not what an earlier session set on it.)
      if (auto literal = replayLiteral("sql_mode", conn->defaultSqlMode()); literal && !conn->defaultSqlMode().empty()) {
        desired_.variables["sql_mode"] = *literal;
        initial_.variables["sql_mode"] = *literal;
      }
      r = co_await conn->sync(desired_);
    }
    if (r) {
      initial_status_ = conn->status() & kCarriedStatus;
      server_sql_mode_ = conn->defaultSqlMode();

      server_version_ = parser::serverVersionFromString(conn->serverVersion());
      if (auto lctn = conn->lowerCaseTableNames()) names_case_sensitive_ = *lctn == 0;
    } else if (r.error().kind == BackendError::Kind::kServer) {
      refusal = r.error().toErrPacket();
    } else {
      conn->markBroken();
    }
    defaultPool().release(std::move(conn));
  }
  txn_.reset(initial_status_);
  syncPinSlot();  // COM_CHANGE_USER: the previous user's slot goes with its state
  updateDialect();
  co_return refusal;
}

awaitable<bool> ClientSession::onChangeUser(protocol::ByteView payload) {
  auto change = protocol::decodeChangeUser(payload, capabilities_);
  if (!change) {
    queueError(reply_seq_, client_error::make(client_error::kMalformedPacket, "shardproxy: malformed COM_CHANGE_USER packet"));
    co_return co_await client_.flush();
  }
  auto& ctx = worker_.context();
  LoginRequest request{connection_id_, ctx.server_version, &ctx.config().users, peer_, nullptr};
  uint8_t seq = reply_seq_;
  auto account = co_await acceptChangeUser(client_, request, *change, scramble_, seq);
  if (!account) {
    // Refused: the session goes on as the user it was (the ERR is queued).
    if (account.error() != LoginFailure::kRefused) co_return false;
    co_return co_await client_.flush();
  }
  // The new user's users[].max_connections counts this session from now on
  // (otherwise a login as one user and a change to another would get round
  // the other's limit); at the limit the change is refused as the server
  // refuses it and the session goes on as the user it was.
  if ((*account)->name != user_) {
    auto user_slot = ctx.users.tryAcquire((*account)->name, (*account)->max_connections);
    if (!user_slot) {
      ctx.refused_per_user.fetch_add(1, std::memory_order_relaxed);
      queueError(seq, tooManyUserConnections((*account)->name));
      co_return co_await client_.flush();
    }
    user_slot_.emplace(std::move(*user_slot));
  }
  // As on the server: the session starts over, as after a new login.
  co_await releasePinned();
  bound_.clear();
  tables_locked_ = false;
  statements_.clear();
  diagnostics_ = SessionDiagnostics{};
  last_insert_id_.reset();
  reads_override_.reset();
  transaction_map_.reset();
  user_ = (*account)->name;
  std::string names = change->character_set ? namesForCollation(*change->character_set) : initial_.names;
  std::string db = change->database.empty() ? (*account)->default_database : change->database;
  if (auto refused = co_await startSession(std::move(names), std::move(db))) {
    // The database does not exist: logged in without one, as the error says.
    desired_.database.clear();
    initial_.database.clear();
    queueError(seq, *refused);
    co_return co_await client_.flush();
  }
  spdlog::debug("session {}: changed user to {}", connection_id_, user_);
  co_return co_await sendLoginOk(seq);
}

}  // namespace sp::proxy
