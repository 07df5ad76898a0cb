// The server side of the MySQL connection phase, shared by the application
// listener and the admin listener: greeting, SSLRequest and TLS when the
// listener has a certificate, HandshakeResponse41, the password check against
// a list of accounts, users[].require_tls and the client-certificate
// requirements (require_x509/subject/issuer, client_certificate.hpp). Plugins: mysql_native_password;
// caching_sha2_password over TLS (fast auth against a clear-text password,
// else full authentication: the client sends its password through TLS); a
// client offering anything else (or caching_sha2 in plaintext) is switched
// to mysql_native_password. On failure the ERR has been sent.
// The exchange itself is protocol::ServerLogin (protocol/server_login.hpp);
// this file drives it over the client's PacketStream and looks accounts up.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "conf/user_account.hpp"
#include "protocol/change_user.hpp"
#include "proxy/net/net.hpp"
#include "proxy/net/packet_stream.hpp"
#include "proxy/net/tls_contexts.hpp"

namespace sp::proxy {

struct LoginRequest {
  uint32_t connection_id = 0;
  std::string_view server_version;
  const std::vector<conf::UserAccount>* accounts = nullptr;
  std::string_view peer;  // "host:port", for messages
  TlsContextPtr tls;      // the listener's certificate; null: CLIENT_SSL not offered
};

struct LoginResult {
  const conf::UserAccount* account = nullptr;
  uint32_t capabilities = 0;  // negotiated
  uint32_t mariadb_capabilities = 0;  // negotiated MariaDB extended capabilities (protocol::mariadb_cap)
  std::string database;       // from CONNECT_WITH_DB, may be empty
  uint8_t collation = 0;      // the client's handshake character set
  uint8_t next_seq = 0;       // sequence id for the OK (or ERR) that ends the login
  std::string scramble;       // of the greeting: COM_CHANGE_USER answers it again
};

enum class LoginFailure : uint8_t {
  kClientLeft,  // closed or broke the connection (or the handshake deadline closed it)
  kTooLarge,    // a packet over the stream's limit (ERR 1043 sent)
  kRefused,     // bad handshake, TLS request without TLS, wrong password, require_tls, certificate (ERR sent)
  kTlsFailed,   // the TLS handshake failed (nothing can be sent)
};

// The capabilities the proxy offers clients (CLIENT_SSL added when the listener has TLS).
uint32_t serverCapabilities();

// Runs the exchange up to (not including) the final OK, which the caller
// sends after its own checks.
awaitable<std::expected<LoginResult, LoginFailure>> acceptLogin(PacketStream& client, const LoginRequest& request);

// COM_CHANGE_USER: the new credentials checked against `request.accounts`
// with the scramble of the connection's greeting, as the server does (a
// client offering another plugin is switched to mysql_native_password with
// it). `seq`: in, the sequence id of the answer; out, that of the final OK.
// On kRefused the ERR is queued (not flushed).
awaitable<std::expected<const conf::UserAccount*, LoginFailure>> acceptChangeUser(
    PacketStream& client, const LoginRequest& request, const protocol::ChangeUser& change, const std::string& scramble,
    uint8_t& seq);

}  // namespace sp::proxy
