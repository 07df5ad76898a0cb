// One logged-in connection to a backend MySQL/MariaDB server, with the
// session state currently applied to it. Owned by a BackendPool while idle and
// by exactly one client session while borrowed.
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conf/backend_config.hpp"
#include "protocol/client_login.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/resultset.hpp"
#include "proxy/backend/backend_error.hpp"
#include "proxy/backend/backend_statements.hpp"
#include "proxy/backend/connection_loan.hpp"
#include "proxy/net/net.hpp"
#include "proxy/net/packet_stream.hpp"
#include "proxy/backend/session_state.hpp"

namespace sp::proxy {

// Capability bits that change statement semantics, so connections differ by them
// (a client without CLIENT_MULTI_STATEMENTS must not get a backend that runs "a;b").
inline constexpr uint32_t kFlavourMask =
    protocol::cap::kFoundRows | protocol::cap::kMultiStatements | protocol::cap::kIgnoreSpace;
// A pseudo flavour bit (never sent to a server): a connection logged in
// without a database, for sessions that chose none. A database cannot be
// unselected, so such a session must never get a connection that has one
// (`SELECT DATABASE()` would answer it, unqualified names would resolve in it).
inline constexpr uint32_t kNoDatabase = 1u << 31;
// A pseudo flavour bit: logged in with MariaDB's extended type info (when the
// server offers it), for clients that negotiated it: their column definitions
// carry one more field, forwarded byte for byte, which other clients cannot read.
inline constexpr uint32_t kExtendedTypesFlavour = 1u << 30;
inline constexpr uint32_t kPoolFlavourMask = kFlavourMask | kNoDatabase | kExtendedTypesFlavour;

class BackendConnection {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects and logs in; `flavour` is a subset of kFlavourMask.
  static awaitable<std::expected<std::unique_ptr<BackendConnection>, BackendError>> open(
      const conf::BackendConfig& config, uint32_t flavour, size_t max_packet_bytes);

  PacketStream& stream() { return stream_; }
  uint32_t capabilities() const { return capabilities_; }
  // MariaDB extended capabilities negotiated at login (protocol::mariadb_cap).
  uint32_t mariadbCapabilities() const { return mariadb_capabilities_; }
  uint32_t flavour() const { return flavour_; }
  uint32_t serverThreadId() const { return thread_id_; }
  // Which connection and which loan of it (the pool counts loans): tells a
  // session whether the connection it borrows again is still as it left it
  // (nobody else borrowed it meanwhile), e.g. still holding its LAST_INSERT_ID.
  uint64_t serial() const { return serial_; }
  uint64_t loans() const { return loans_; }
  void noteLoan() { ++loans_; }
  ConnectionLoan loan() const { return {serial_, loans_}; }
  // The global-variables epoch (proxy_context.hpp) this connection's session
  // started in: it has the global defaults of that moment.
  uint64_t globalsEpoch() const { return globals_epoch_; }
  void setGlobalsEpoch(uint64_t epoch) { globals_epoch_ = epoch; }
  // The epoch this connection logged in at. Unlike globalsEpoch() a reset
  // does not move it: the limits the server fixes at connect time
  // (max_allowed_packet, net_buffer_length) are those of this moment.
  uint64_t openedEpoch() const { return opened_epoch_; }
  const std::string& serverVersion() const { return server_version_; }
  SessionState& applied() { return applied_; }

  // Sends one command and reads its whole response (result sets are drained).
  // Returns the final OK (or EOF status) on success.
  awaitable<std::expected<protocol::OkPacket, BackendError>> command(protocol::Command cmd,
                                                                     std::string_view argument);
  // Two statements of the proxy's own in one write, their answers read in
  // turn: one round trip instead of two (XA END + XA COMMIT ... ONE PHASE).
  // The server runs the second whatever the first answered, so it must be
  // one that fails harmlessly after the first failed. A lost connection
  // fails both.
  using OkOrError = std::expected<protocol::OkPacket, BackendError>;
  awaitable<std::pair<OkOrError, OkOrError>> queryPair(std::string_view first, std::string_view second);
  // Runs one statement of the proxy's own and returns its text rows (small
  // results only: SHOW WARNINGS after a statement that had warnings).
  using TextRows = std::vector<std::vector<std::optional<std::string>>>;
  awaitable<std::expected<TextRows, BackendError>> queryRows(std::string_view sql);
  // The same with the result's column definitions (catalog answers, the
  // schema-drift check: results of a few thousand rows at most).
  struct TextResult {
    std::vector<protocol::ColumnDefinition41> columns;
    TextRows rows;
  };
  awaitable<std::expected<TextResult, BackendError>> queryResult(std::string_view sql);
  // The backend statement for `sql` on this connection, preparing it first if
  // needed (statements evicted from the bounded cache are closed).
  awaitable<std::expected<BackendStatement, BackendError>> prepared(const std::string& sql);
  BackendStatementCache& statements() { return statements_; }

  // True when sync(desired) would send nothing and change nothing: the
  // common case, checked without starting a coroutine.
  bool inSync(const SessionState& desired) const;
  // Applies the session state difference (database, names, variables).
  awaitable<std::expected<void, BackendError>> sync(const SessionState& desired);

  // COM_RESET_CONNECTION (rolls back, drops temporary tables, user variables
  // and prepared statements, restores the server's defaults), then session
  // tracking again. False (and broken) when it failed.
  awaitable<bool> resetSession();
  // The server reports this connection's session changes (CLIENT_SESSION_TRACK
  // negotiated and kEnableSessionTracking accepted).
  bool tracksSession() const { return tracks_session_; }
  // The sql_mode a fresh session has on this server (its global default),
  // read at login and after each reset.
  const std::string& defaultSqlMode() const { return default_sql_mode_; }
  // @@lower_case_table_names (read with the sql_mode): 0 compares table
  // names byte for byte; nullopt when it could not be read.
  std::optional<int> lowerCaseTableNames() const { return lower_case_table_names_; }
  // The server session's max_allowed_packet, read at login (0: unknown). It
  // is fixed for the connection's life (global_defaults.hpp): a command
  // payload at least this long is refused by the server with 1153, which then
  // closes the connection.
  uint64_t maxAllowedPacket() const { return max_allowed_packet_; }
  // Status flags of the last complete response (command(), forwarded
  // responses, login): the state this connection's session is in.
  uint16_t status() const { return status_; }
  void noteStatus(uint16_t flags) { status_ = flags; }

  bool broken() const { return broken_; }
  // A pooled connection the server closed meanwhile (restart, wait_timeout):
  // one non-blocking MSG_PEEK, so a dead connection is never lent out.
  bool peerClosed();
  void markBroken() { broken_ = true; }
  Clock::time_point lastUsed() const { return last_used_; }
  void touch() { last_used_ = Clock::now(); }

  explicit BackendConnection(tcp::socket socket, size_t max_packet_bytes);
  // Closes the socket, saying COM_QUIT first when the connection is logged
  // in, plain and between commands: a server counts a connection closed
  // without it in Aborted_clients and logs "Aborted connection ... (Got an
  // error reading communication packets)" for it (log_warnings >= 2,
  // MariaDB's default), so every pool trim and recovery pass would read as a
  // client dying. A TLS connection closes without it (its goodbye would have
  // to go through OpenSSL's write path, a suspension, where callers close at
  // once); a broken one has no server left to tell. The destructor does this
  // for a connection still open. stream().close() closes without a word (a
  // connection in use, whose borrower must fail at once).
  void closeGracefully();
  ~BackendConnection() { closeGracefully(); }
  BackendConnection(const BackendConnection&) = delete;
  BackendConnection& operator=(const BackendConnection&) = delete;

 private:
  awaitable<std::expected<void, BackendError>> login(const conf::BackendConfig& config);
  protocol::ClientLoginOptions loginOptions(const conf::BackendConfig& config) const;
  awaitable<std::expected<void, BackendError>> startTls(const conf::BackendConfig& config,
                                                        const protocol::Bytes& ssl_request);
  BackendError ioError(std::string_view what) const;
  awaitable<std::expected<void, BackendError>> enableTracking();
  awaitable<std::expected<protocol::OkPacket, BackendError>> exchange(protocol::Command cmd,
                                                                      std::string_view argument, TextRows* rows,
                                                                      std::vector<protocol::ColumnDefinition41>* columns = nullptr);
  // The whole response to a command already sent (exchange()'s second half).
  awaitable<OkOrError> readResponse(TextRows* rows, std::vector<protocol::ColumnDefinition41>* column_defs);

  PacketStream stream_;
  uint32_t capabilities_ = 0;
  uint32_t mariadb_capabilities_ = 0;
  uint32_t flavour_ = 0;
  uint32_t thread_id_ = 0;
  uint64_t serial_;
  uint64_t loans_ = 0;
  uint64_t globals_epoch_ = 0;
  uint64_t opened_epoch_ = 0;
  std::string server_version_;
  std::string backend_name_;
  SessionState applied_;
  BackendStatementCache statements_;
  bool broken_ = false;
  bool logged_in_ = false;  // open() finished: the server reads commands now
  bool tracks_session_ = false;
  std::string default_sql_mode_;
  std::optional<int> lower_case_table_names_;
  uint64_t max_allowed_packet_ = 0;
  uint16_t status_ = 0;
  Clock::time_point last_used_ = Clock::now();
};

// False once a backend logged in without MariaDB's extended type info (a
// MySQL server): the proxy then stops offering it to clients, whose column
// definitions would otherwise lack the field they expect.
bool backendsOfferExtendedTypes();

// Server ERR packet -> BackendError{kServer}.
BackendError serverError(protocol::ByteView err_payload);

}  // namespace sp::proxy
