#include "proxy/server_handshake.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "proxy/backend_connection.hpp"
#include "proxy/client_errors.hpp"

namespace sp::proxy {

namespace cap = protocol::cap;

namespace {

// No compression, no LOCAL INFILE, no SESSION_TRACK (sessions are
// multiplexed over backend connections); SSL when a certificate is configured.
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
    cap::kConnectAttrs | cap::kPluginAuthLenencClientData | cap::kDeprecateEof;

// Queues an ERR; not a coroutine, so temporaries in the arguments stay out of
// co_await expressions (GCC 12 mishandles some of those).
void queueErr(PacketStream& client, uint8_t seq, client_error::Code code, std::string message) {
  protocol::Bytes out;
  protocol::encode(client_error::make(code, std::move(message)), out);
  client.append(out, seq);
}

const conf::UserAccount* findAccount(const std::vector<conf::UserAccount>& accounts, std::string_view name) {
  for (const auto& a : accounts) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Sends `out` (an auth switch or more-data packet) and reads the client's
// answer; `seq` comes in as the packet's and leaves as the next server packet's.
awaitable<std::expected<std::string, LoginFailure>> exchangeAuthData(PacketStream& client, const protocol::Bytes& out,
                                                                      uint8_t& seq) {
  using Failed = std::unexpected<LoginFailure>;
  client.append(out, seq);
  if (!co_await client.flush()) co_return Failed(LoginFailure::kClientLeft);
  auto reply = co_await client.read();
  if (!reply && reply.error() == StreamError::kTooLarge) {
    queueErr(client, static_cast<uint8_t>(seq + 1), client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kTooLarge);
  }
  if (!reply) co_return Failed(LoginFailure::kClientLeft);
  seq = reply->sequence_id + 1;
  co_return std::string(protocol::asText(reply->payload));
}

// Asks the client for an answer to `scramble` with `plugin`: mysql_native_password
// for a client that offered another plugin (a MySQL 8 client offering
// caching_sha2_password in plaintext), caching_sha2_password for a client that
// named it without answering (its first answer was for the greeting's plugin).
awaitable<std::expected<std::string, LoginFailure>> switchPlugin(PacketStream& client, std::string_view plugin,
                                                                  const std::string& scramble, uint8_t& seq) {
  protocol::AuthSwitchRequest sw{std::string(plugin), scramble};
  protocol::Bytes out;
  protocol::encode(sw, out);
  co_return co_await exchangeAuthData(client, out, seq);
}

// How the client proved it knows the password.
enum class Proof : uint8_t {
  kNativeScramble,  // mysql_native_password answer to the scramble
  kClearText,       // the password itself (caching_sha2_password full authentication, over TLS only)
};

bool equalConstantTime(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool passwordMatches(const conf::UserAccount& account, Proof proof, const std::string& scramble,
                     std::string_view response) {
  if (proof == Proof::kClearText) {
    return account.password_hash.empty() ? equalConstantTime(account.password, response)
                                         : equalConstantTime(account.password_hash, protocol::nativePasswordHash(response));
  }
  return account.password_hash.empty() ? protocol::verifyNativePassword(account.password, scramble, response)
                                       : protocol::verifyNativePasswordHash(account.password_hash, scramble, response);
}

// The account `username` whose password `response` proves, and which may log
// in over this connection; otherwise queues the server's 1045 and returns
// nullptr. An account with require_tls gets the same 1045 over plaintext, as
// MariaDB answers a REQUIRE SSL account (only the log says why).
const conf::UserAccount* checkPassword(PacketStream& client, const LoginRequest& request, std::string_view username,
                                       Proof proof, const std::string& scramble, std::string_view response,
                                       uint8_t seq) {
  const auto* account = findAccount(*request.accounts, username);
  const bool ok = account && passwordMatches(*account, proof, scramble, response);
  const bool tls_missing = ok && account->require_tls && !client.isTls();
  if (ok && !tls_missing) return account;
  std::string_view host = request.peer.substr(0, request.peer.rfind(':'));
  spdlog::info("connection {}: access denied for user '{}' from {}{}", request.connection_id, username, request.peer,
               tls_missing ? " (require_tls: the connection is not encrypted)" : "");
  queueErr(client, seq, client_error::kAccessDenied,
           fmt::format("Access denied for user '{}'@'{}' (using password: {})", username, host,
                       response.empty() ? "NO" : "YES"));
  return nullptr;
}

// caching_sha2_password over TLS. A scramble answer that matches a clear-text
// password in the config is fast authentication (0x03, then OK); otherwise
// (a password_hash account, or no match) full authentication: 0x04, and the
// client sends its password, NUL-terminated, through the encrypted stream.
awaitable<std::expected<std::string, LoginFailure>> cachingSha2OverTls(PacketStream& client,
                                                                        const LoginRequest& request,
                                                                        const conf::UserAccount* account,
                                                                        const std::string& scramble,
                                                                        std::string_view response, uint8_t& seq,
                                                                        Proof& proof) {
  using Failed = std::unexpected<LoginFailure>;
  protocol::Bytes out;
  if (response.empty()) {
    // An empty password: nothing to send, checked like a native empty answer.
    proof = Proof::kNativeScramble;
    co_return std::string();
  }
  if (account && account->password_hash.empty() && !account->password.empty() &&
      equalConstantTime(response, protocol::cachingSha2Response(account->password, scramble))) {
    protocol::encodeAuthMoreData(std::string(1, char(protocol::kCachingSha2FastAuthOk)), out);
    seq = client.append(out, seq);
    proof = Proof::kClearText;
    spdlog::debug("connection {}: caching_sha2_password fast authentication", request.connection_id);
    co_return account->password;
  }
  spdlog::debug("connection {}: caching_sha2_password full authentication over TLS", request.connection_id);
  protocol::encodeAuthMoreData(std::string(1, char(protocol::kCachingSha2FullAuthNeeded)), out);
  auto password = co_await exchangeAuthData(client, out, seq);
  if (!password) co_return Failed(password.error());
  if (!password->empty() && password->back() == '\0') password->pop_back();
  proof = Proof::kClearText;
  co_return std::move(*password);
}

// The plugin exchange after the client's first answer, then the password
// check. `plugin` empty means mysql_native_password (a client without
// CLIENT_PLUGIN_AUTH, or COM_CHANGE_USER without a plugin name).
awaitable<std::expected<const conf::UserAccount*, LoginFailure>> authenticate(
    PacketStream& client, const LoginRequest& request, std::string_view username, std::string_view plugin,
    std::string_view first_response, const std::string& scramble, uint8_t& seq) {
  using Failed = std::unexpected<LoginFailure>;
  Proof proof = Proof::kNativeScramble;
  std::string response(first_response);
  if (plugin == protocol::kCachingSha2Plugin && client.isTls()) {
    if (response.empty()) {
      // MariaDB's client plugin answers the greeting's plugin, not its own, with nothing.
      const std::string_view sha2 = protocol::kCachingSha2Plugin;
      auto answer = co_await switchPlugin(client, sha2, scramble, seq);
      if (!answer) co_return Failed(answer.error());
      response = std::move(*answer);
    }
    const auto* account = findAccount(*request.accounts, username);
    auto answer = co_await cachingSha2OverTls(client, request, account, scramble, response, seq, proof);
    if (!answer) co_return Failed(answer.error());
    response = std::move(*answer);
  } else if (!plugin.empty() && plugin != protocol::kNativePasswordPlugin) {
    const std::string_view native = protocol::kNativePasswordPlugin;
    auto answer = co_await switchPlugin(client, native, scramble, seq);
    if (!answer) co_return Failed(answer.error());
    response = std::move(*answer);
  }
  const auto* account = checkPassword(client, request, username, proof, scramble, response, seq);
  if (!account) co_return Failed(LoginFailure::kRefused);
  co_return account;
}

// After an SSLRequest: the TLS handshake, then the real login response
// through it. Before login the stream's limits stay (packet cap; the caller's
// deadline closes the socket, which aborts a stalled TLS handshake too).
awaitable<std::expected<StreamMessage, LoginFailure>> upgradeToTls(PacketStream& client, const LoginRequest& request) {
  using Failed = std::unexpected<LoginFailure>;
  const std::string_view no_host_check;  // clients are not asked for certificates
  auto started = co_await client.startTls(request.tls, TlsRole::kServer, no_host_check);
  if (!started) {
    spdlog::info("connection {} from {}: {}", request.connection_id, request.peer, started.error());
    co_return Failed(LoginFailure::kTlsFailed);
  }
  auto msg = co_await client.read();
  if (!msg && msg.error() == StreamError::kTooLarge) {
    queueErr(client, 3, client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kTooLarge);
  }
  if (!msg) co_return Failed(LoginFailure::kClientLeft);
  co_return *msg;
}

}  // namespace

uint32_t serverCapabilities() { return kServerCapabilities; }

awaitable<std::expected<LoginResult, LoginFailure>> acceptLogin(PacketStream& client, const LoginRequest& request) {
  using Failed = std::unexpected<LoginFailure>;
  const std::string scramble = protocol::makeScramble();
  protocol::HandshakeV10 hs;
  hs.server_version = std::string(request.server_version);
  hs.connection_id = request.connection_id;
  hs.auth_plugin_data = scramble;
  hs.capabilities = (kServerCapabilities & ~cap::kLongPassword) | (request.tls ? cap::kSsl : 0);
  hs.mariadb_capabilities = backendsOfferExtendedTypes() ? kGreetingMariadbCapabilities : 0;
  hs.character_set = protocol::kCollationUtf8mb4GeneralCi;
  hs.status_flags = protocol::status::kAutocommit;
  hs.auth_plugin_name = std::string(protocol::kNativePasswordPlugin);
  protocol::Bytes out;
  protocol::encode(hs, out);
  client.append(out, 0);
  if (!co_await client.flush()) co_return Failed(LoginFailure::kClientLeft);

  // A client may send its TLS ClientHello right behind the SSLRequest.
  client.setReadExactly(request.tls != nullptr);
  auto msg = co_await client.read();
  client.setReadExactly(false);
  if (!msg && msg.error() == StreamError::kTooLarge) {
    // Before login only small packets are read (server.max_handshake_packet_bytes);
    // MariaDB answers a handshake it cannot read with 1043 too.
    queueErr(client, 2, client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kTooLarge);
  }
  if (!msg) co_return Failed(LoginFailure::kClientLeft);
  if (protocol::isSslRequest(msg->payload)) {
    if (!request.tls) {
      queueErr(client, static_cast<uint8_t>(msg->sequence_id + 1), client_error::kHandshake,
               "shardproxy: TLS is not configured on this listener (server.tls_cert)");
      co_await client.flush();
      co_return Failed(LoginFailure::kRefused);
    }
    auto upgraded = co_await upgradeToTls(client, request);
    if (!upgraded) co_return Failed(upgraded.error());
    msg = std::move(*upgraded);
  }
  uint8_t seq = msg->sequence_id + 1;
  auto resp = protocol::decodeHandshakeResponse41(msg->payload);
  if (!resp || !(resp->capabilities & cap::kProtocol41)) {
    queueErr(client, seq, client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kRefused);
  }
  const std::string_view plugin =
      (resp->capabilities & cap::kPluginAuth) ? std::string_view(resp->auth_plugin_name) : std::string_view();
  auto account = co_await authenticate(client, request, resp->username, plugin, resp->auth_response, scramble, seq);
  if (!account) {
    if (account.error() == LoginFailure::kRefused) co_await client.flush();
    co_return Failed(account.error());
  }
  LoginResult result;
  result.scramble = scramble;
  result.account = *account;
  result.capabilities = resp->capabilities & (kServerCapabilities | cap::kSsl);
  result.mariadb_capabilities = resp->mariadb_capabilities & hs.mariadb_capabilities;
  if (result.capabilities & cap::kConnectWithDb) result.database = resp->database;
  result.collation = resp->character_set;
  result.next_seq = seq;
  co_return result;
}

}  // namespace sp::proxy

namespace sp::proxy {

awaitable<std::expected<const conf::UserAccount*, LoginFailure>> acceptChangeUser(
    PacketStream& client, const LoginRequest& request, const protocol::ChangeUser& change, const std::string& scramble,
    uint8_t& seq) {
  return authenticate(client, request, change.username, change.auth_plugin_name, change.auth_response, scramble, seq);
}

}  // namespace sp::proxy
