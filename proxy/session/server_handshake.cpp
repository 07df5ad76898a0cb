#include "proxy/session/server_handshake.hpp"

#include <spdlog/spdlog.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/server_login.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/net/client_certificate.hpp"

namespace sp::proxy {

namespace cap = protocol::cap;

namespace {

// No compression; SSL when a certificate is configured. SESSION_TRACK: each
// client's own session_track_* settings select what its OK packets report
// (session_tracking.hpp).
// LONG_PASSWORD ("CLIENT_MYSQL") is clear in the greeting, as MariaDB servers
// have it: MariaDB clients then send MariaDB extended capabilities, of which
// the proxy offers one, extended type info (column definitions saying
// `format=json`, `uuid`..., forwarded from backends logged in with it:
// kExtendedTypesFlavour).
constexpr uint32_t kGreetingMariadbCapabilities = protocol::mariadb_cap::kExtendedTypeInfo;
constexpr uint32_t kServerCapabilities =
    cap::kLongPassword | cap::kFoundRows | cap::kLongFlag | cap::kConnectWithDb | cap::kIgnoreSpace |
    cap::kProtocol41 | cap::kInteractive | cap::kTransactions | cap::kSecureConnection |
    cap::kMultiStatements | cap::kMultiResults | cap::kPsMultiResults | cap::kPluginAuth |
    cap::kConnectAttrs | cap::kPluginAuthLenencClientData | cap::kDeprecateEof | cap::kSessionTrack |
    cap::kLocalFiles;  // as the server offers it; a file is relayed only for users[].local_infile

const conf::UserAccount* findAccount(const std::vector<conf::UserAccount>& accounts, std::string_view name) {
  for (const auto& a : accounts) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

protocol::LoginAccount loginAccount(const conf::UserAccount* account) {
  protocol::LoginAccount out;
  if (!account) return out;
  out.exists = true;
  out.password = account->password;
  out.password_hash = account->password_hash;
  out.require_tls = account->require_tls;
  return out;
}

protocol::ServerLoginOptions loginOptions(const LoginRequest& request, std::string scramble) {
  protocol::ServerLoginOptions options;
  options.server_version = std::string(request.server_version);
  options.connection_id = request.connection_id;
  options.scramble = std::move(scramble);
  options.capabilities = kServerCapabilities;
  options.tls_available = request.tls != nullptr;
  options.mariadb_capabilities = backendsOfferExtendedTypes() ? kGreetingMariadbCapabilities : 0;
  options.character_set = protocol::kCollationUtf8mb4GeneralCi;
  options.status_flags = protocol::status::kAutocommit;
  options.client_host = std::string(request.peer.substr(0, request.peer.rfind(':')));
  return options;
}

// `certificate_shortfall`: why the account's certificate requirement is not
// met (client_certificate.hpp), for the log.
LoginFailure failureOf(const protocol::ServerLogin& login, const LoginRequest& request,
                       const std::string& certificate_shortfall) {
  using protocol::LoginRefusal;
  const LoginRefusal why = login.refusal();
  if (why == LoginRefusal::kAccessDenied || why == LoginRefusal::kTlsRequired ||
      why == LoginRefusal::kCertificateRequired) {
    std::string reason;
    if (why == LoginRefusal::kTlsRequired) reason = " (require_tls: the connection is not encrypted)";
    if (why == LoginRefusal::kCertificateRequired) reason = " (" + certificate_shortfall + ")";
    spdlog::info("connection {}: access denied for user '{}' from {}{}", request.connection_id, login.username(),
                 request.peer, reason);
  }
  return why == LoginRefusal::kTooLarge ? LoginFailure::kTooLarge : LoginFailure::kRefused;
}

// Drives the connection-phase state machine (protocol/server_login.hpp) over
// the client's stream: sends what it queues, reads what it asks for, starts
// TLS, looks accounts up. On kRefused/kTooLarge the ERR is queued, not flushed.
awaitable<std::expected<const conf::UserAccount*, LoginFailure>> driveLogin(PacketStream& client,
                                                                             const LoginRequest& request,
                                                                             protocol::ServerLogin& login) {
  using Failed = std::unexpected<LoginFailure>;
  using Next = protocol::ServerLogin::Next;
  const conf::UserAccount* account = nullptr;
  std::string certificate_shortfall;
  bool sha2_logged = false;
  for (Next next = login.start();;) {
    if (!sha2_logged && login.cachingSha2Auth() != protocol::CachingSha2Auth::kNone) {
      sha2_logged = true;
      spdlog::debug("connection {}: caching_sha2_password {}", request.connection_id,
                    login.cachingSha2Auth() == protocol::CachingSha2Auth::kFast ? "fast authentication"
                                                                                : "full authentication over TLS");
    }
    client.appendFramedBytes(login.output());
    login.output().clear();
    switch (next) {
      case Next::kLookupAccount: {
        account = findAccount(*request.accounts, login.username());
        protocol::LoginAccount found = loginAccount(account);
        // TLS (if any) is up by now: the response came after the handshake.
        if (account) certificate_shortfall = certificateShortfall(*account, client);
        found.certificate_refused = !certificate_shortfall.empty();
        next = login.onAccount(found);
        break;
      }
      case Next::kStartTls: {
        if (!co_await client.flush()) co_return Failed(LoginFailure::kClientLeft);
        // Before login the stream's limits stay (packet cap; the caller's
        // deadline closes the socket, which aborts a stalled TLS handshake too).
        // Clients are asked for a certificate when server.tls_ca is set (the
        // context says so); a client certificate names no host to check.
        const std::string_view no_host_check;
        auto started = co_await client.startTls(request.tls, TlsRole::kServer, no_host_check);
        if (!started) {
          spdlog::info("connection {} from {}: {}", request.connection_id, request.peer, started.error());
          co_return Failed(LoginFailure::kTlsFailed);
        }
        next = login.onTlsStarted();
        break;
      }
      case Next::kRead: {
        if (!co_await client.flush()) co_return Failed(LoginFailure::kClientLeft);
        // A client may send its TLS ClientHello right behind the SSLRequest.
        client.setReadExactly(login.readExactly());
        auto msg = co_await client.read();
        client.setReadExactly(false);
        if (msg) {
          next = login.onMessage(msg->payload, msg->first_sequence_id, msg->sequence_id);
        } else if (msg.error() == StreamError::kTooLarge) {
          // Before login only small packets are read (server.max_handshake_packet_bytes);
          // MariaDB answers a handshake it cannot read with 1043 too.
          next = login.onTooLarge();
        } else if (msg.error() == StreamError::kOutOfOrder) {
          next = login.onOutOfOrder(client.expectedSequenceId());
        } else {
          co_return Failed(LoginFailure::kClientLeft);
        }
        break;
      }
      case Next::kDone:
        co_return account;
      case Next::kFailed:
        co_return Failed(failureOf(login, request, certificate_shortfall));
    }
  }
}

}  // namespace

uint32_t serverCapabilities() { return kServerCapabilities; }

awaitable<std::expected<LoginResult, LoginFailure>> acceptLogin(PacketStream& client, const LoginRequest& request) {
  using Failed = std::unexpected<LoginFailure>;
  protocol::ServerLogin login(loginOptions(request, protocol::makeScramble()));
  auto account = co_await driveLogin(client, request, login);
  if (!account) {
    if (account.error() != LoginFailure::kClientLeft && account.error() != LoginFailure::kTlsFailed) {
      co_await client.flush();
    }
    co_return Failed(account.error());
  }
  LoginResult result;
  result.scramble = login.scramble();
  result.account = *account;
  result.capabilities = login.negotiatedCapabilities();
  result.mariadb_capabilities = login.negotiatedMariadbCapabilities();
  if (result.capabilities & cap::kConnectWithDb) result.database = login.response().database;
  result.collation = login.response().character_set;
  result.next_seq = login.nextSequenceId();
  co_return result;
}

awaitable<std::expected<const conf::UserAccount*, LoginFailure>> acceptChangeUser(
    PacketStream& client, const LoginRequest& request, const protocol::ChangeUser& change, const std::string& scramble,
    uint8_t& seq) {
  auto login = protocol::ServerLogin::changeUser(loginOptions(request, scramble), client.isTls(), change, seq);
  auto account = co_await driveLogin(client, request, login);
  seq = login.nextSequenceId();
  if (!account && account.error() == LoginFailure::kTooLarge) co_await client.flush();
  co_return account;
}

}  // namespace sp::proxy
