// Connection phase of a client session: greeting, login, authentication.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/handshake.hpp"
#include "proxy/backend_pool.hpp"
#include "proxy/client_errors.hpp"
#include "proxy/client_session.hpp"
#include "proxy/worker.hpp"

namespace sp::proxy {

namespace cap = protocol::cap;

namespace {

// What the proxy offers clients. No SSL or compression yet, no LOCAL INFILE,
// no SESSION_TRACK (sessions are multiplexed over backend connections).
constexpr uint32_t kServerCapabilities =
    cap::kLongPassword | cap::kFoundRows | cap::kLongFlag | cap::kConnectWithDb | cap::kIgnoreSpace |
    cap::kProtocol41 | cap::kInteractive | cap::kTransactions | cap::kSecureConnection |
    cap::kMultiStatements | cap::kMultiResults | cap::kPsMultiResults | cap::kPluginAuth |
    cap::kConnectAttrs | cap::kPluginAuthLenencClientData | cap::kDeprecateEof;

}  // namespace

awaitable<bool> ClientSession::handshake() {
  auto& ctx = worker_.context();
  const std::string scramble = protocol::makeScramble();
  protocol::HandshakeV10 hs;
  hs.server_version = ctx.server_version;
  hs.connection_id = connection_id_;
  hs.auth_plugin_data = scramble;
  hs.capabilities = kServerCapabilities;
  hs.character_set = protocol::kCollationUtf8mb4GeneralCi;
  hs.status_flags = protocol::status::kAutocommit;
  hs.auth_plugin_name = std::string(protocol::kNativePasswordPlugin);
  protocol::Bytes out;
  protocol::encode(hs, out);
  client_.append(out, 0);
  if (!co_await client_.flush()) co_return false;

  auto msg = co_await client_.read();
  if (!msg) co_return false;
  uint8_t seq = msg->sequence_id + 1;
  if (protocol::isSslRequest(msg->payload)) {
    co_await sendError(seq, client_error::make(client_error::kHandshake, "shardproxy: TLS is not supported on this listener"));
    co_return false;
  }
  auto resp = protocol::decodeHandshakeResponse41(msg->payload);
  if (!resp || !(resp->capabilities & cap::kProtocol41)) {
    co_await sendError(seq, client_error::make(client_error::kHandshake, "Bad handshake"));
    co_return false;
  }
  capabilities_ = resp->capabilities & kServerCapabilities;
  user_ = resp->username;
  std::string plugin = (resp->capabilities & cap::kPluginAuth) ? resp->auth_plugin_name
                                                               : std::string(protocol::kNativePasswordPlugin);
  if (!co_await authenticate(resp->username, resp->auth_response, plugin, scramble, seq)) co_return false;

  const auto* account = ctx.config.findUser(user_);
  std::string db = (capabilities_ & cap::kConnectWithDb) && !resp->database.empty() ? resp->database
                                                                                    : account->default_database;
  desired_.names = namesForCollation(resp->character_set);
  desired_.database = db;
  initial_ = desired_;
  if (!db.empty()) {
    // Like MySQL, refuse a login to a database that does not exist. A backend
    // that is down does not block the login: statements will report it.
    auto conn = co_await borrow(defaultPool(), false);
    if (conn) {
      auto r = co_await conn->sync(desired_);
      bool refused = !r && r.error().kind == BackendError::Kind::kServer;
      if (!r && !refused) conn->markBroken();
      defaultPool().release(std::move(conn));
      if (refused) {
        co_await sendError(seq, protocol::ErrPacket{r.error().code, r.error().sql_state, r.error().message});
        co_return false;
      }
    }
  }
  spdlog::debug("session {} user {} from {} logged in (db '{}')", connection_id_, user_, peer_, db);
  co_return co_await sendOk(seq);
}

awaitable<bool> ClientSession::authenticate(const std::string& user, std::string auth_response,
                                            const std::string& plugin, const std::string& scramble,
                                            uint8_t& seq) {
  if (plugin != protocol::kNativePasswordPlugin) {
    // e.g. a MySQL 8 client offering caching_sha2_password: switch it to native.
    protocol::AuthSwitchRequest sw{std::string(protocol::kNativePasswordPlugin), scramble};
    protocol::Bytes out;
    protocol::encode(sw, out);
    client_.append(out, seq);
    if (!co_await client_.flush()) co_return false;
    auto reply = co_await client_.read();
    if (!reply) co_return false;
    auth_response = std::string(protocol::asText(reply->payload));
    seq = reply->sequence_id + 1;
  }
  const auto* account = worker_.context().config.findUser(user);
  if (!account || !protocol::verifyNativePassword(account->password, scramble, auth_response)) {
    std::string host = peer_.substr(0, peer_.rfind(':'));
    spdlog::info("session {}: access denied for user '{}' from {}", connection_id_, user, peer_);
    co_await sendError(seq, client_error::make(client_error::kAccessDenied,
        fmt::format("Access denied for user '{}'@'{}' (using password: {})", user, host,
                    auth_response.empty() ? "NO" : "YES")));
    co_return false;
  }
  co_return true;
}

}  // namespace sp::proxy
