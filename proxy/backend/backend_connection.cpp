#include "proxy/backend/backend_connection.hpp"

#include <atomic>
#include <charconv>

#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>

#include "protocol/client_login.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/prepared.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/resultset.hpp"
#include "proxy/backend/global_defaults.hpp"
#include "proxy/net/tls_contexts.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;
namespace cap = protocol::cap;

namespace {

// What the proxy asks of every backend connection. No DEPRECATE_EOF (the proxy
// translates for clients that want it). LOCAL_FILES: the server may ask for a
// LOAD DATA LOCAL file; the route execution relays the client's only for
// users[].local_infile and answers any other request with an empty file
// (route_execution.cpp). SESSION_TRACK: the
// server reports every change of session state a statement made
// (session_state.hpp, adoptTrackedChanges); OK packets carrying it are
// re-encoded for clients (route_execution.cpp).
constexpr uint32_t kBackendCapabilities =
    cap::kLongPassword | cap::kLongFlag | cap::kConnectWithDb | cap::kProtocol41 |
    cap::kTransactions | cap::kSecureConnection | cap::kMultiResults | cap::kPsMultiResults |
    cap::kPluginAuth | cap::kPluginAuthLenencClientData | cap::kConnectAttrs | cap::kSessionTrack |
    cap::kLocalFiles;

BackendError makeError(BackendError::Kind kind, std::string message) {
  BackendError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

}  // namespace

BackendError serverError(protocol::ByteView err_payload) {
  auto err = protocol::decodeErrPacket(err_payload);
  if (!err) return makeError(BackendError::Kind::kProtocol, "malformed ERR packet from backend");
  BackendError e;
  e.kind = BackendError::Kind::kServer;
  e.code = err->error_code;
  e.sql_state = err->sql_state.empty() ? "HY000" : err->sql_state;
  e.message = err->message;
  return e;
}

namespace {
std::atomic<uint64_t> next_connection_serial{1};
std::atomic<bool> extended_types_everywhere{true};
}  // namespace

bool backendsOfferExtendedTypes() { return extended_types_everywhere.load(std::memory_order_relaxed); }

BackendConnection::BackendConnection(tcp::socket socket, size_t max_packet_bytes)
    : stream_(std::move(socket), max_packet_bytes, PacketStream::kBackendReadBuffer),
      serial_(next_connection_serial.fetch_add(1, std::memory_order_relaxed)) {}

void BackendConnection::closeGracefully() {
  if (!stream_.isOpen()) return;
  // Between commands: nothing left to send, no answer left unread.
  const bool idle = stream_.pendingOutput() == 0 && !stream_.hasBufferedPacket();
  if (logged_in_ && !broken_ && !stream_.isTls() && idle) {
    // Header (payload length 1, sequence id 0) and COM_QUIT: a best-effort
    // non-blocking send; whatever it returns, the socket closes.
    static constexpr uint8_t kQuit[] = {1, 0, 0, 0, static_cast<uint8_t>(protocol::Command::kQuit)};
    (void)::send(stream_.socket().native_handle(), kQuit, sizeof kQuit, MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  stream_.close();
}

BackendError BackendConnection::ioError(std::string_view what) const {
  return makeError(BackendError::Kind::kIo,
                   fmt::format("{}: {}", what, stream_.lastError() ? stream_.lastError().message() : "connection closed"));
}

awaitable<std::expected<std::unique_ptr<BackendConnection>, BackendError>> BackendConnection::open(
    const conf::BackendConfig& config, uint32_t flavour, size_t max_packet_bytes) {
  // Read before logging in: a SET GLOBAL racing the login makes this
  // connection count as older than it is, never newer.
  const uint64_t epoch = currentGlobalsEpoch();
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  asio::steady_timer timer(ex);
  auto timeout = std::chrono::milliseconds(config.connect_timeout_ms);
  timer.expires_after(timeout);

  auto [rec, endpoints] = co_await resolver.async_resolve(config.address.host,
                                                          std::to_string(config.address.port), kNoThrow);
  if (rec) co_return std::unexpected(makeError(BackendError::Kind::kConnect, "cannot resolve " + config.address.host + ": " + rec.message()));

  tcp::socket socket(ex);
  auto result = co_await (asio::async_connect(socket, endpoints, kNoThrow) || timer.async_wait(kNoThrow));
  if (result.index() == 1) {
    co_return std::unexpected(makeError(BackendError::Kind::kConnect, fmt::format("connect timed out after {} ms", config.connect_timeout_ms)));
  }
  auto [cec, ep] = std::get<0>(result);
  if (cec) co_return std::unexpected(makeError(BackendError::Kind::kConnect, "connect failed: " + cec.message()));

  auto conn = std::make_unique<BackendConnection>(std::move(socket), max_packet_bytes);
  conn->flavour_ = flavour & kPoolFlavourMask;
  conn->backend_name_ = config.name;
  conn->globals_epoch_ = epoch;
  conn->opened_epoch_ = epoch;
  timer.expires_after(timeout);
  auto login = co_await (conn->login(config) || timer.async_wait(kNoThrow));
  if (login.index() == 1) {
    co_return std::unexpected(makeError(BackendError::Kind::kConnect, fmt::format("login timed out after {} ms", config.connect_timeout_ms)));
  }
  if (auto& r = std::get<0>(login); !r) {
    auto e = r.error();
    if (e.kind != BackendError::Kind::kServer) e.kind = BackendError::Kind::kConnect;
    co_return std::unexpected(std::move(e));
  }
  conn->applied_.database = (flavour & kNoDatabase) ? std::string() : config.database;
  conn->applied_.names = namesForCollation(kBackendCollation);
  if (auto tracking = co_await conn->enableTracking(); !tracking) {
    co_return std::unexpected(tracking.error());
  }
  conn->logged_in_ = true;
  co_return conn;
}

BackendError loginError(const protocol::ClientLoginError& error) {
  using Kind = protocol::ClientLoginError::Kind;
  if (error.kind == Kind::kServer) {
    BackendError e;
    e.kind = BackendError::Kind::kServer;
    e.code = error.server.error_code;
    e.sql_state = error.server.sql_state;
    e.message = error.server.message;
    return e;
  }
  return makeError(error.kind == Kind::kProtocol ? BackendError::Kind::kProtocol : BackendError::Kind::kConnect,
                   error.message);
}

protocol::ClientLoginOptions BackendConnection::loginOptions(const conf::BackendConfig& config) const {
  protocol::ClientLoginOptions options;
  options.capabilities = kBackendCapabilities | (flavour_ & kFlavourMask);
  if (config.database.empty() || (flavour_ & kNoDatabase)) options.capabilities &= ~cap::kConnectWithDb;
  options.extended_type_info = (flavour_ & kExtendedTypesFlavour) != 0;
  options.tls = config.tls.has_value();
  options.character_set = kBackendCollation;
  options.user = config.user;
  options.password = config.password;
  options.database = config.database;
  options.attributes = {{"_client_name", "shardproxy"}, {"program_name", "shardproxy"}};
  return options;
}

// Drives the login state machine (protocol/client_login.hpp) over the stream.
awaitable<std::expected<void, BackendError>> BackendConnection::login(const conf::BackendConfig& config) {
  using Next = protocol::ClientLogin::Next;
  protocol::ClientLogin login(loginOptions(config));
  Next next = login.start();
  for (bool greeted = false; next == Next::kRead || next == Next::kStartTls;) {
    if (next == Next::kStartTls) {
      if (auto tls = co_await startTls(config, login.output()); !tls) co_return std::unexpected(tls.error());
      login.output().clear();
      next = login.onTlsStarted();
      continue;
    }
    if (!login.output().empty()) {
      stream_.appendFramedBytes(login.output());
      login.output().clear();
      if (!co_await stream_.flush()) co_return std::unexpected(ioError("sending login"));
    }
    auto reply = co_await stream_.read();
    if (!reply) co_return std::unexpected(ioError(greeted ? "reading login reply" : "reading server greeting"));
    next = login.onMessage(reply->payload, reply->first_sequence_id, reply->sequence_id);
    if (!greeted && login.greeting()) {
      greeted = true;
      const auto& hs = *login.greeting();
      thread_id_ = hs.connection_id;
      server_version_ = hs.server_version;
      if (!(hs.mariadb_capabilities & protocol::mariadb_cap::kExtendedTypeInfo)) {
        extended_types_everywhere.store(false, std::memory_order_relaxed);
      }
    }
  }
  capabilities_ = login.capabilities();
  mariadb_capabilities_ = login.mariadbCapabilities();
  if (next == Next::kFailed) co_return std::unexpected(loginError(login.error()));
  status_ = login.statusFlags();
  co_return std::expected<void, BackendError>{};
}

// Sends the SSLRequest, then the TLS handshake (certificate checked per backends[].tls).
awaitable<std::expected<void, BackendError>> BackendConnection::startTls(const conf::BackendConfig& config,
                                                                         const protocol::Bytes& ssl_request) {
  auto ctx = backendTlsContext(*config.tls);
  if (!ctx) co_return std::unexpected(makeError(BackendError::Kind::kConnect, "TLS: " + ctx.error()));
  stream_.appendFramedBytes(ssl_request);
  if (!co_await stream_.flush()) co_return std::unexpected(ioError("sending SSL request"));
  const std::string verify_host = config.tls->verify ? backendTlsName(config) : std::string();
  auto started = co_await stream_.startTls(*ctx, TlsRole::kClient, verify_host);
  if (!started) co_return std::unexpected(makeError(BackendError::Kind::kConnect, "TLS to the backend: " + started.error()));
  co_return std::expected<void, BackendError>{};
}

awaitable<std::expected<protocol::OkPacket, BackendError>> BackendConnection::command(
    protocol::Command cmd, std::string_view argument) {
  return exchange(cmd, argument, nullptr);
}

awaitable<std::expected<BackendConnection::TextRows, BackendError>> BackendConnection::queryRows(
    std::string_view sql) {
  TextRows rows;
  auto done = co_await exchange(protocol::Command::kQuery, sql, &rows);
  if (!done) co_return std::unexpected(std::move(done.error()));
  co_return rows;
}

awaitable<std::expected<BackendConnection::TextResult, BackendError>> BackendConnection::queryResult(
    std::string_view sql) {
  TextResult result;
  auto done = co_await exchange(protocol::Command::kQuery, sql, &result.rows, &result.columns);
  if (!done) co_return std::unexpected(std::move(done.error()));
  co_return result;
}

// One command of the proxy's own and its whole response; result-set rows
// are decoded into `rows` when given (column definitions into `columns`),
// else drained.
awaitable<std::expected<protocol::OkPacket, BackendError>> BackendConnection::exchange(
    protocol::Command cmd, std::string_view argument, TextRows* rows,
    std::vector<protocol::ColumnDefinition41>* column_defs) {
  const auto parts = protocol::commandParts(cmd, argument);
  stream_.append(parts.command, parts.argument, 0);
  if (!co_await stream_.flush()) {
    broken_ = true;
    co_return std::unexpected(ioError("sending command"));
  }
  co_return co_await readResponse(rows, column_defs);
}

awaitable<std::pair<BackendConnection::OkOrError, BackendConnection::OkOrError>> BackendConnection::queryPair(
    std::string_view first, std::string_view second) {
  for (std::string_view sql : {first, second}) {
    const auto parts = protocol::commandParts(protocol::Command::kQuery, sql);
    stream_.append(parts.command, parts.argument, 0);
  }
  if (!co_await stream_.flush()) {
    broken_ = true;
    co_return std::pair<OkOrError, OkOrError>{std::unexpected(ioError("sending command")),
                                              std::unexpected(ioError("sending command"))};
  }
  OkOrError a = co_await readResponse(nullptr, nullptr);
  if (!a && a.error().kind != BackendError::Kind::kServer) co_return std::pair<OkOrError, OkOrError>{a, a};
  OkOrError b = co_await readResponse(nullptr, nullptr);
  co_return std::pair<OkOrError, OkOrError>{std::move(a), std::move(b)};
}

awaitable<BackendConnection::OkOrError> BackendConnection::readResponse(
    TextRows* rows, std::vector<protocol::ColumnDefinition41>* column_defs) {
  protocol::ResponseTracker tracker(protocol::ResponseKind::kQuery, capabilities_, mariadb_capabilities_);
  std::optional<BackendError> server_err;
  size_t columns = 0;
  auto malformed = [this](const char* what) {
    broken_ = true;
    return std::unexpected(makeError(BackendError::Kind::kProtocol, what));
  };
  while (!tracker.done()) {
    auto msg = co_await stream_.read();
    if (!msg) {
      broken_ = true;
      co_return std::unexpected(ioError("reading response"));
    }
    auto ev = tracker.onPacket(msg->payload);
    if (!ev) co_return malformed("malformed response from backend");
    if (*ev == protocol::ResponseEvent::kErr) server_err = serverError(msg->payload);
    if (!rows) continue;
    if (*ev == protocol::ResponseEvent::kColumnCount) {
      auto count = protocol::decodeColumnCount(msg->payload);
      if (!count) co_return malformed("malformed column count");
      columns = static_cast<size_t>(*count);
    } else if (*ev == protocol::ResponseEvent::kColumnDef && column_defs) {
      auto def = protocol::decodeColumnDefinition41(msg->payload, mariadb_capabilities_);
      if (!def) co_return malformed("malformed column definition");
      column_defs->push_back(std::move(*def));
    } else if (*ev == protocol::ResponseEvent::kRow) {
      auto row = protocol::decodeTextRow(msg->payload, columns);
      if (!row) co_return malformed("malformed row");
      auto& out = rows->emplace_back();
      for (const auto& v : *row) out.push_back(v ? std::optional<std::string>(std::string(*v)) : std::nullopt);
    }
  }
  touch();
  if (server_err) co_return std::unexpected(std::move(*server_err));
  status_ = tracker.statusFlags();
  protocol::OkPacket ok;
  ok.status_flags = tracker.statusFlags();
  ok.affected_rows = tracker.affectedRows();
  ok.last_insert_id = tracker.lastInsertId();
  ok.warnings = tracker.warnings();
  co_return ok;
}

awaitable<std::expected<void, BackendError>> BackendConnection::enableTracking() {
  tracks_session_ = false;
  if (!(capabilities_ & cap::kSessionTrack)) co_return std::expected<void, BackendError>{};
  auto r = co_await command(protocol::Command::kQuery, kEnableSessionTracking);
  if (!r) {
    // A server without these variables (or one that refuses them) still
    // works; the proxy then keeps every connection whose state it cannot see.
    if (r.error().kind == BackendError::Kind::kServer) co_return std::expected<void, BackendError>{};
    co_return std::unexpected(r.error());
  }
  tracks_session_ = true;
  // What a session starts with (lexing depends on it: parser/dialect.hpp).
  // How it compares table names (routing/name_scope.hpp), and the largest
  // command it takes (maxAllowedPacket()), in the same round trip.
  auto mode = co_await queryRows("SELECT @@session.sql_mode, @@lower_case_table_names, @@session.max_allowed_packet");
  if (!mode) {
    if (mode.error().kind == BackendError::Kind::kServer) co_return std::expected<void, BackendError>{};
    co_return std::unexpected(mode.error());
  }
  if (mode->size() == 1 && mode->front().size() == 3 && mode->front()[0]) {
    default_sql_mode_ = *mode->front()[0];
    // Known state: a session whose sql_mode (the global default when it
    // started) differs, after a SET GLOBAL, gets its own on this connection.
    if (auto literal = replayLiteral("sql_mode", default_sql_mode_)) applied_.variables["sql_mode"] = *literal;
    if (const auto& lctn = mode->front()[1]) {
      int value = 0;
      if (std::from_chars(lctn->data(), lctn->data() + lctn->size(), value).ec == std::errc{}) {
        lower_case_table_names_ = value;
      }
    }
    if (const auto& packet = mode->front()[2]) {
      uint64_t value = 0;
      if (std::from_chars(packet->data(), packet->data() + packet->size(), value).ec == std::errc{}) {
        max_allowed_packet_ = value;
      }
    }
  }
  co_return std::expected<void, BackendError>{};
}

awaitable<bool> BackendConnection::resetSession() {
  const uint64_t epoch = currentGlobalsEpoch();
  auto r = co_await command(protocol::Command::kResetConnection, {});
  if (!r) {
    broken_ = true;
    co_return false;
  }
  statements_.clear();
  applied_ = SessionState{};
  applied_.names = namesForCollation(kBackendCollation);
  // The reset put session_track_* back to the server's defaults.
  if (!co_await enableTracking()) {
    broken_ = true;
    co_return false;
  }
  globals_epoch_ = epoch;  // the reset re-read the global defaults
  co_return true;
}


bool BackendConnection::peerClosed() {
  if (broken_ || !stream_.isOpen()) return true;
  // An idle connection has nothing to read: EOF, an error or stray bytes all mean it is not clean.
  if (stream_.hasBufferedPacket()) return true;
  char byte;
  ssize_t n = ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  return true;
}

awaitable<std::expected<BackendStatement, BackendError>> BackendConnection::prepared(const std::string& sql) {
  if (auto hit = statements_.find(sql)) co_return *hit;
  protocol::Bytes payload;
  protocol::encode(protocol::StmtPrepare{sql}, payload);
  stream_.append(payload, 0);
  if (!co_await stream_.flush()) {
    broken_ = true;
    co_return std::unexpected(ioError("sending prepare"));
  }
  protocol::ResponseTracker tracker(protocol::ResponseKind::kPrepare, capabilities_, mariadb_capabilities_);
  std::optional<BackendError> server_err;
  while (!tracker.done()) {
    auto msg = co_await stream_.read();
    if (!msg) {
      broken_ = true;
      co_return std::unexpected(ioError("reading prepare response"));
    }
    auto ev = tracker.onPacket(msg->payload);
    if (!ev) {
      broken_ = true;
      co_return std::unexpected(makeError(BackendError::Kind::kProtocol, "malformed prepare response from backend"));
    }
    if (*ev == protocol::ResponseEvent::kErr) server_err = serverError(msg->payload);
  }
  touch();
  if (server_err) co_return std::unexpected(std::move(*server_err));
  const auto& ok = tracker.prepareOk();
  BackendStatement stmt{ok.statement_id, ok.num_params, ok.num_columns};
  for (uint32_t evicted : statements_.insert(sql, stmt)) {
    // COM_STMT_CLOSE has no response: queue it ahead of the next command.
    protocol::Bytes close;
    protocol::encode(protocol::StmtClose{evicted}, close);
    stream_.append(close, 0);
  }
  co_return stmt;
}

bool BackendConnection::inSync(const SessionState& desired) const {
  return (desired.database.empty() || desired.database == applied_.database) && desired.names == applied_.names &&
         desired.character_set == applied_.character_set && desired.isolation == applied_.isolation &&
         desired.variables == applied_.variables;
}

awaitable<std::expected<void, BackendError>> BackendConnection::sync(const SessionState& desired) {
  if (!desired.database.empty() && desired.database != applied_.database) {
    auto r = co_await command(protocol::Command::kInitDb, desired.database);
    if (!r) co_return std::unexpected(r.error());
    applied_.database = desired.database;
  }
  for (const auto& sql : syncStatements(desired, applied_)) {
    auto r = co_await command(protocol::Command::kQuery, sql);
    if (!r) {
      // Part of the state may have been applied: the connection's state is unknown now.
      broken_ = true;
      co_return std::unexpected(r.error());
    }
  }
  // Everything succeeded: the connection now carries the session's state.
  std::string db = applied_.database;
  applied_ = desired;
  if (desired.database.empty()) applied_.database = db;
  co_return std::expected<void, BackendError>{};
}

}  // namespace sp::proxy
