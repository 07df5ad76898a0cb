#include "protocol/client_login.hpp"

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/packet.hpp"

namespace sp::protocol {

namespace {
// OK, ERR, switches and more-data packets: a login needs at most a few.
constexpr int kMaxReplies = 4;
}  // namespace

ClientLogin::ClientLogin(ClientLoginOptions options) : options_(std::move(options)) {}

ClientLogin::Next ClientLogin::fail(ClientLoginError::Kind kind, std::string message) {
  error_.kind = kind;
  error_.message = std::move(message);
  state_ = State::kFailed;
  return Next::kFailed;
}

ClientLogin::Next ClientLogin::failWithServerError(ByteView err_payload) {
  auto err = decodeErrPacket(err_payload);
  if (!err) return fail(ClientLoginError::Kind::kProtocol, "malformed ERR packet from backend");
  error_.server = std::move(*err);
  if (error_.server.sql_state.empty()) error_.server.sql_state = "HY000";
  return fail(ClientLoginError::Kind::kServer, error_.server.message);
}

ClientLogin::Next ClientLogin::onMessage(ByteView payload, uint8_t first_seq, uint8_t last_seq) {
  if (state_ != State::kGreeting && state_ != State::kReply) {
    return fail(ClientLoginError::Kind::kProtocol, "unexpected packet during login");
  }
  // An ERR before the greeting (too many connections, a blocked host) comes with id 0 too.
  if (first_seq != seq_) return fail(ClientLoginError::Kind::kProtocol, "backend sent packets out of order during login");
  seq_ = static_cast<uint8_t>(last_seq + 1);
  if (state_ == State::kGreeting) return onGreeting(payload);
  return onReply(payload);
}

ClientLogin::Next ClientLogin::onGreeting(ByteView payload) {
  if (isErrPacket(payload)) return failWithServerError(payload);
  auto hs = decodeHandshakeV10(payload);
  if (!hs) return fail(ClientLoginError::Kind::kProtocol, "malformed server greeting");
  if (!(hs->capabilities & cap::kProtocol41)) {
    return fail(ClientLoginError::Kind::kProtocol, "server does not speak protocol 4.1");
  }
  greeting_ = std::move(*hs);
  capabilities_ = options_.capabilities & (greeting_->capabilities | cap::kLongPassword);
  if (options_.extended_type_info && !(greeting_->capabilities & cap::kLongPassword)) {
    // A MariaDB server: ask for extended type info (clearing CLIENT_MYSQL says
    // the extended capabilities follow). Decided before TLS: the server takes
    // the extended capabilities from the SSL request, so both packets carry them.
    mariadb_capabilities_ = greeting_->mariadb_capabilities & mariadb_cap::kExtendedTypeInfo;
    capabilities_ &= ~cap::kLongPassword;
  }
  if (!options_.tls) return sendResponse();
  if (!(greeting_->capabilities & cap::kSsl)) {
    return fail(ClientLoginError::Kind::kUnsupported,
                "backends[].tls is set but the server does not offer TLS (its have_ssl is not YES: ssl_cert/ssl_key)");
  }
  capabilities_ |= cap::kSsl;
  Bytes payload_out;
  encode(SslRequest{capabilities_, options_.max_packet_size, options_.character_set, mariadb_capabilities_},
         payload_out);
  seq_ = appendFramed(out_, payload_out, seq_);
  state_ = State::kTls;
  return Next::kStartTls;
}

ClientLogin::Next ClientLogin::onTlsStarted() {
  if (state_ != State::kTls) return fail(ClientLoginError::Kind::kProtocol, "TLS started out of turn");
  tls_active_ = true;
  return sendResponse();
}

ClientLogin::Next ClientLogin::sendResponse() {
  const std::string scramble = greeting_->auth_plugin_data.substr(0, kScrambleLength);
  const bool sha2 = greeting_->auth_plugin_name == kCachingSha2Plugin;
  HandshakeResponse41 resp;
  resp.capabilities = capabilities_;
  resp.mariadb_capabilities = mariadb_capabilities_;
  resp.max_packet_size = options_.max_packet_size;
  resp.character_set = options_.character_set;
  resp.username = options_.user;
  if (capabilities_ & cap::kConnectWithDb) resp.database = options_.database;
  resp.auth_plugin_name = std::string(sha2 ? kCachingSha2Plugin : kNativePasswordPlugin);
  resp.auth_response = sha2 ? cachingSha2Response(options_.password, scramble)
                            : nativePasswordResponse(options_.password, scramble);
  resp.attributes = options_.attributes;
  Bytes payload;
  encode(resp, payload);
  seq_ = appendFramed(out_, payload, seq_);
  state_ = State::kReply;
  return Next::kRead;
}

ClientLogin::Next ClientLogin::readMore() {
  if (rounds_ >= kMaxReplies) return fail(ClientLoginError::Kind::kProtocol, "too many authentication rounds");
  return Next::kRead;
}

ClientLogin::Next ClientLogin::answer(std::string_view data) {
  seq_ = appendFramed(out_, asBytes(data), seq_);
  return readMore();
}

ClientLogin::Next ClientLogin::onReply(ByteView p) {
  ++rounds_;
  if (isOkPacket(p)) {
    auto ok = decodeOkPacket(p, capabilities_);
    if (!ok) return fail(ClientLoginError::Kind::kProtocol, "malformed login OK");
    status_flags_ = ok->status_flags;
    state_ = State::kDone;
    return Next::kDone;
  }
  if (isErrPacket(p)) return failWithServerError(p);
  if (!p.empty() && p[0] == kAuthSwitchHeader) return onAuthSwitch(p);
  if (!p.empty() && p[0] == kAuthMoreDataHeader) return onMoreData(p);
  return fail(ClientLoginError::Kind::kProtocol, "unexpected packet during login");
}

ClientLogin::Next ClientLogin::onAuthSwitch(ByteView p) {
  auto sw = decodeAuthSwitchRequest(p);
  if (!sw) return fail(ClientLoginError::Kind::kProtocol, "malformed auth switch request");
  const std::string data = sw->plugin_data.substr(0, kScrambleLength);
  if (sw->plugin_name == kNativePasswordPlugin) return answer(nativePasswordResponse(options_.password, data));
  if (sw->plugin_name == kCachingSha2Plugin) return answer(cachingSha2Response(options_.password, data));
  return fail(ClientLoginError::Kind::kUnsupported, "backend asks for unsupported auth plugin " + sw->plugin_name +
                                                        "; use mysql_native_password for the proxy's account");
}

// caching_sha2_password: 0x03 = fast auth succeeded (OK follows); 0x04 =
// full authentication: the password itself, which only TLS may carry.
ClientLogin::Next ClientLogin::onMoreData(ByteView p) {
  if (p.size() == 2 && p[1] == kCachingSha2FastAuthOk) return readMore();
  if (p.size() == 2 && p[1] == kCachingSha2FullAuthNeeded && tls_active_) {
    std::string password = options_.password;
    password.push_back('\0');
    return answer(password);
  }
  return fail(ClientLoginError::Kind::kUnsupported,
              "backend requires caching_sha2_password full authentication, which needs TLS (backends[].tls) or "
              "mysql_native_password for the proxy's account");
}

}  // namespace sp::protocol
