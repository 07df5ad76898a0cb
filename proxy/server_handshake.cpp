#include "proxy/server_handshake.hpp"

#include <fmt/format.h>
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

// No SSL or compression yet, no LOCAL INFILE, no SESSION_TRACK (sessions are
// multiplexed over backend connections). LONG_PASSWORD ("CLIENT_MYSQL") is
// clear in the greeting, as MariaDB servers have it: MariaDB clients then
// send MariaDB extended capabilities, of which the proxy offers one,
// extended type info (column definitions saying `format=json`, `uuid`...,
// forwarded from backends logged in with it: kExtendedTypesFlavour).
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

// Asks a client that offered another plugin for a mysql_native_password
// answer to `scramble` (e.g. a MySQL 8 client offering caching_sha2_password).
awaitable<std::expected<std::string, LoginFailure>> switchToNative(PacketStream& client, const std::string& scramble,
                                                                    uint8_t& seq) {
  using Failed = std::unexpected<LoginFailure>;
  protocol::AuthSwitchRequest sw{std::string(protocol::kNativePasswordPlugin), scramble};
  protocol::Bytes out;
  protocol::encode(sw, out);
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

// The account `username` whose password answers `scramble`; otherwise queues
// the server's 1045 and returns nullptr.
const conf::UserAccount* checkPassword(PacketStream& client, const LoginRequest& request, std::string_view username,
                                       const std::string& scramble, const std::string& auth_response, uint8_t seq) {
  const auto* account = findAccount(*request.accounts, username);
  const bool ok = account && (account->password_hash.empty()
                                  ? protocol::verifyNativePassword(account->password, scramble, auth_response)
                                  : protocol::verifyNativePasswordHash(account->password_hash, scramble, auth_response));
  if (ok) return account;
  std::string_view host = request.peer.substr(0, request.peer.rfind(':'));
  spdlog::info("connection {}: access denied for user '{}' from {}", request.connection_id, username, request.peer);
  queueErr(client, seq, client_error::kAccessDenied,
           fmt::format("Access denied for user '{}'@'{}' (using password: {})", username, host,
                       auth_response.empty() ? "NO" : "YES"));
  return nullptr;
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
  hs.capabilities = kServerCapabilities & ~cap::kLongPassword;
  hs.mariadb_capabilities = backendsOfferExtendedTypes() ? kGreetingMariadbCapabilities : 0;
  hs.character_set = protocol::kCollationUtf8mb4GeneralCi;
  hs.status_flags = protocol::status::kAutocommit;
  hs.auth_plugin_name = std::string(protocol::kNativePasswordPlugin);
  protocol::Bytes out;
  protocol::encode(hs, out);
  client.append(out, 0);
  if (!co_await client.flush()) co_return Failed(LoginFailure::kClientLeft);

  auto msg = co_await client.read();
  if (!msg && msg.error() == StreamError::kTooLarge) {
    // Before login only small packets are read (server.max_handshake_packet_bytes);
    // MariaDB answers a handshake it cannot read with 1043 too.
    queueErr(client, 2, client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kTooLarge);
  }
  if (!msg) co_return Failed(LoginFailure::kClientLeft);
  uint8_t seq = msg->sequence_id + 1;
  if (protocol::isSslRequest(msg->payload)) {
    queueErr(client, seq, client_error::kHandshake, "shardproxy: TLS is not supported on this listener");
    co_await client.flush();
    co_return Failed(LoginFailure::kRefused);
  }
  auto resp = protocol::decodeHandshakeResponse41(msg->payload);
  if (!resp || !(resp->capabilities & cap::kProtocol41)) {
    queueErr(client, seq, client_error::kHandshake, "Bad handshake");
    co_await client.flush();
    co_return Failed(LoginFailure::kRefused);
  }
  std::string auth_response = resp->auth_response;
  bool plugin_auth = resp->capabilities & cap::kPluginAuth;
  if (plugin_auth && resp->auth_plugin_name != protocol::kNativePasswordPlugin) {
    auto answer = co_await switchToNative(client, scramble, seq);
    if (!answer) co_return Failed(answer.error());
    auth_response = std::move(*answer);
  }
  const auto* account = checkPassword(client, request, resp->username, scramble, auth_response, seq);
  if (!account) {
    co_await client.flush();
    co_return Failed(LoginFailure::kRefused);
  }
  LoginResult result;
  result.scramble = scramble;
  result.account = account;
  result.capabilities = resp->capabilities & kServerCapabilities;
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
  using Failed = std::unexpected<LoginFailure>;
  std::string auth_response = change.auth_response;
  if (!change.auth_plugin_name.empty() && change.auth_plugin_name != protocol::kNativePasswordPlugin) {
    auto answer = co_await switchToNative(client, scramble, seq);
    if (!answer) co_return Failed(answer.error());
    auth_response = std::move(*answer);
  }
  const auto* account = checkPassword(client, request, change.username, scramble, auth_response, seq);
  if (!account) co_return Failed(LoginFailure::kRefused);
  co_return account;
}

}  // namespace sp::proxy
