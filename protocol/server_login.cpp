#include "protocol/server_login.hpp"

#include <openssl/crypto.h>

#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"

namespace sp::protocol {

namespace {

// The server's errors for the connection phase.
constexpr uint16_t kErHandshake = 1043;         // ER_HANDSHAKE_ERROR, 08S01
constexpr uint16_t kErAccessDenied = 1045;      // ER_ACCESS_DENIED_ERROR, 28000
constexpr uint16_t kErPacketsOutOfOrder = 1156;  // ER_NET_PACKETS_OUT_OF_ORDER, 08S01

bool equalConstantTime(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

ServerLogin::ServerLogin(ServerLoginOptions options) : options_(std::move(options)) {}

ServerLogin ServerLogin::changeUser(ServerLoginOptions options, bool tls_active, const ChangeUser& change,
                                    uint8_t reply_seq) {
  ServerLogin login(std::move(options));
  login.state_ = State::kAccount;
  login.seq_ = reply_seq;
  login.tls_active_ = tls_active;
  login.username_ = change.username;
  login.plugin_ = change.auth_plugin_name;
  login.auth_response_ = change.auth_response;
  return login;
}

ServerLogin::Next ServerLogin::start() {
  if (state_ == State::kAccount) return Next::kLookupAccount;
  HandshakeV10 hs;
  hs.server_version = options_.server_version;
  hs.connection_id = options_.connection_id;
  hs.auth_plugin_data = options_.scramble;
  hs.capabilities = (options_.capabilities & ~cap::kLongPassword) | (options_.tls_available ? cap::kSsl : 0);
  hs.mariadb_capabilities = options_.mariadb_capabilities;
  hs.character_set = options_.character_set;
  hs.status_flags = options_.status_flags;
  hs.auth_plugin_name = std::string(kNativePasswordPlugin);
  Bytes payload;
  encode(hs, payload);
  return send(payload, State::kResponse);
}

ServerLogin::Next ServerLogin::send(ByteView payload, State then) {
  seq_ = appendFramed(out_, payload, seq_);
  state_ = then;
  return Next::kRead;
}

ServerLogin::Next ServerLogin::fail(LoginRefusal why, uint16_t code, const char* sql_state, std::string message,
                                    uint8_t seq) {
  Bytes payload;
  encode(ErrPacket{code, sql_state, std::move(message)}, payload);
  appendFramed(out_, payload, seq);
  refusal_ = why;
  state_ = State::kFailed;
  return Next::kFailed;
}

ServerLogin::Next ServerLogin::onTooLarge() {
  // The server has taken the header (and its sequence id) when it finds the
  // length too big: its ERR carries the id after the expected one.
  return fail(LoginRefusal::kTooLarge, kErHandshake, "08S01", "Bad handshake", static_cast<uint8_t>(seq_ + 1));
}

ServerLogin::Next ServerLogin::onOutOfOrder(uint8_t expected_seq) {
  return fail(LoginRefusal::kOutOfOrder, kErPacketsOutOfOrder, "08S01", "Got packets out of order", expected_seq);
}

ServerLogin::Next ServerLogin::onMessage(ByteView payload, uint8_t first_seq, uint8_t last_seq) {
  if (state_ == State::kDone || state_ == State::kFailed || state_ == State::kAccount || state_ == State::kGreeting) {
    return onOutOfOrder(seq_);  // nothing is read in these states: a caller bug, refused all the same
  }
  if (first_seq != seq_) return onOutOfOrder(seq_);
  seq_ = static_cast<uint8_t>(last_seq + 1);
  switch (state_) {
    case State::kResponse:
    case State::kAfterTls:
      return onResponse(payload);
    case State::kSwitchAnswer:
      auth_response_ = std::string(asText(payload));
      return check(Proof::kNativeScramble, auth_response_);
    case State::kSha2SwitchAnswer:
      return cachingSha2(std::string(asText(payload)));
    case State::kSha2Password: {
      std::string_view password = asText(payload);
      if (!password.empty() && password.back() == '\0') password.remove_suffix(1);
      return check(Proof::kClearText, password);
    }
    default:
      return onOutOfOrder(seq_);
  }
}

ServerLogin::Next ServerLogin::onResponse(ByteView payload) {
  if (state_ == State::kResponse && isSslRequest(payload)) {
    if (!options_.tls_available) {
      return fail(LoginRefusal::kTlsUnavailable, kErHandshake, "08S01",
                  "shardproxy: TLS is not configured on this listener (server.tls_cert)", seq_);
    }
    state_ = State::kAfterTls;
    return Next::kStartTls;
  }
  auto response = decodeHandshakeResponse41(payload);
  if (!response || !(response->capabilities & cap::kProtocol41)) {
    return fail(LoginRefusal::kBadHandshake, kErHandshake, "08S01", "Bad handshake", seq_);
  }
  response_ = std::move(*response);
  username_ = response_.username;
  plugin_ = (response_.capabilities & cap::kPluginAuth) ? response_.auth_plugin_name : std::string();
  auth_response_ = response_.auth_response;
  state_ = State::kAccount;
  return Next::kLookupAccount;
}

ServerLogin::Next ServerLogin::onTlsStarted() {
  tls_active_ = true;
  return Next::kRead;
}

ServerLogin::Next ServerLogin::onAccount(const LoginAccount& account) {
  account_ = account;
  return authenticate();
}

// The plugin exchange after the client's first answer.
ServerLogin::Next ServerLogin::authenticate() {
  if (plugin_ == kCachingSha2Plugin && tls_active_) {
    if (auth_response_.empty()) {
      // MariaDB's client plugin answers the greeting's plugin, not its own, with nothing.
      Bytes payload;
      encode(AuthSwitchRequest{std::string(kCachingSha2Plugin), options_.scramble}, payload);
      return send(payload, State::kSha2SwitchAnswer);
    }
    return cachingSha2(auth_response_);
  }
  if (!plugin_.empty() && plugin_ != kNativePasswordPlugin) {
    // A MySQL 8 client offering caching_sha2_password in plaintext, or any other plugin.
    Bytes payload;
    encode(AuthSwitchRequest{std::string(kNativePasswordPlugin), options_.scramble}, payload);
    return send(payload, State::kSwitchAnswer);
  }
  return check(Proof::kNativeScramble, auth_response_);
}

// caching_sha2_password over TLS. A scramble answer that matches a clear-text
// password is fast authentication; otherwise (a password_hash account, or no
// match) full authentication: the client sends its password through TLS.
ServerLogin::Next ServerLogin::cachingSha2(std::string response) {
  auth_response_ = std::move(response);
  // An empty password: nothing to send, checked like a native empty answer.
  if (auth_response_.empty()) return check(Proof::kNativeScramble, auth_response_);
  if (account_.exists && account_.password_hash.empty() && !account_.password.empty() &&
      equalConstantTime(auth_response_, cachingSha2Response(account_.password, options_.scramble))) {
    Bytes payload;
    encodeAuthMoreData(std::string(1, char(kCachingSha2FastAuthOk)), payload);
    seq_ = appendFramed(out_, payload, seq_);
    sha2_auth_ = CachingSha2Auth::kFast;
    return check(Proof::kClearText, account_.password);
  }
  Bytes payload;
  encodeAuthMoreData(std::string(1, char(kCachingSha2FullAuthNeeded)), payload);
  sha2_auth_ = CachingSha2Auth::kFull;
  return send(payload, State::kSha2Password);
}

// The account's password against the proof; an account with require_tls
// gets the same 1045 over plaintext, as MariaDB answers a REQUIRE SSL
// account, and so does one whose certificate requirement is not met
// (refusal() tells the caller why, for its log).
ServerLogin::Next ServerLogin::check(Proof proof, std::string_view response) {
  bool ok = false;
  if (account_.exists) {
    if (proof == Proof::kClearText) {
      ok = account_.password_hash.empty() ? equalConstantTime(account_.password, response)
                                          : equalConstantTime(account_.password_hash, nativePasswordHash(response));
    } else {
      ok = account_.password_hash.empty()
               ? verifyNativePassword(account_.password, options_.scramble, response)
               : verifyNativePasswordHash(account_.password_hash, options_.scramble, response);
    }
  }
  const bool tls_missing = ok && account_.require_tls && !tls_active_;
  const bool certificate_missing = ok && !tls_missing && account_.certificate_refused;
  if (ok && !tls_missing && !certificate_missing) {
    state_ = State::kDone;
    return Next::kDone;
  }
  const LoginRefusal why = tls_missing           ? LoginRefusal::kTlsRequired
                           : certificate_missing ? LoginRefusal::kCertificateRequired
                                                 : LoginRefusal::kAccessDenied;
  return fail(why, kErAccessDenied, "28000",
              "Access denied for user '" + username_ + "'@'" + options_.client_host + "' (using password: " +
                  (response.empty() ? "NO" : "YES") + ")",
              seq_);
}

uint32_t ServerLogin::negotiatedCapabilities() const {
  return response_.capabilities & (options_.capabilities | cap::kSsl);
}

uint32_t ServerLogin::negotiatedMariadbCapabilities() const {
  return response_.mariadb_capabilities & options_.mariadb_capabilities;
}

}  // namespace sp::protocol
