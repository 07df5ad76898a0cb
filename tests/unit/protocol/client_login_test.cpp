// The proxy as a client logging in to a backend (protocol/client_login.hpp),
// driven by scripted server bytes: native and caching_sha2 logins, auth
// switches, TLS, the server's ERR, wrong sequence ids, and every truncation
// of every server message (a clean failure, never a crash).
#include "protocol/client_login.hpp"

#include <gtest/gtest.h>

#include "login_script.hpp"
#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::packetsIn;
using Kind = ClientLoginError::Kind;
using ClientNext = ClientLogin::Next;

const std::string kClientScramble = "ABCDEFGHIJ9876543210";
constexpr uint32_t kWanted = cap::kLongPassword | cap::kLongFlag | cap::kConnectWithDb | cap::kProtocol41 |
                             cap::kTransactions | cap::kSecureConnection | cap::kMultiResults | cap::kPluginAuth |
                             cap::kPluginAuthLenencClientData | cap::kConnectAttrs | cap::kSessionTrack;

ClientLoginOptions clientOptions(bool tls = false, bool extended = false) {
  ClientLoginOptions o;
  o.capabilities = kWanted;
  o.extended_type_info = extended;
  o.tls = tls;
  o.character_set = kCollationUtf8mb4GeneralCi;
  o.user = "proxy";
  o.password = "secret";
  o.database = "im";
  o.attributes = {{"_client_name", "shardproxy"}};
  return o;
}

// A MariaDB-like greeting (CLIENT_MYSQL clear, extended caps) or a MySQL-like one.
Bytes greeting(std::string_view plugin = kNativePasswordPlugin, bool ssl = true, bool mariadb = true) {
  HandshakeV10 hs;
  hs.server_version = "10.11.19-MariaDB";
  hs.connection_id = 77;
  hs.auth_plugin_data = kClientScramble;
  hs.capabilities = (kWanted | cap::kMultiStatements | cap::kDeprecateEof | (ssl ? cap::kSsl : 0)) &
                    ~(mariadb ? cap::kLongPassword : 0);
  hs.mariadb_capabilities = mariadb ? mariadb_cap::kExtendedTypeInfo | mariadb_cap::kCacheMetadata : 0;
  hs.character_set = 45;
  hs.status_flags = status::kAutocommit;
  hs.auth_plugin_name = std::string(plugin);
  Bytes out;
  encode(hs, out);
  return out;
}

Bytes ok(uint16_t status_flags = status::kAutocommit) {
  Bytes out;
  OkPacket m;
  m.status_flags = status_flags;
  encode(m, cap::kProtocol41, out);
  return out;
}

Bytes err(uint16_t code, std::string message) {
  Bytes out;
  encode(ErrPacket{code, "28000", std::move(message)}, out);
  return out;
}

Bytes authSwitch(std::string_view plugin, std::string data) {
  Bytes out;
  encode(AuthSwitchRequest{std::string(plugin), std::move(data)}, out);
  return out;
}

Bytes take(ClientLogin& login) {
  Bytes out = std::move(login.output());
  login.output().clear();
  return out;
}

TEST(ClientLogin, NativePassword) {
  ClientLogin login(clientOptions());
  ASSERT_EQ(login.start(), ClientNext::kRead);
  EXPECT_TRUE(take(login).empty());
  ASSERT_EQ(login.onMessage(greeting(), 0, 0), ClientNext::kRead);
  ASSERT_TRUE(login.greeting());
  EXPECT_EQ(login.greeting()->connection_id, 77u);
  auto packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 1);
  auto resp = decodeHandshakeResponse41(packets[0].payload);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->username, "proxy");
  EXPECT_EQ(resp->database, "im");
  EXPECT_EQ(resp->auth_plugin_name, kNativePasswordPlugin);
  EXPECT_EQ(resp->auth_response, nativePasswordResponse("secret", kClientScramble));
  EXPECT_TRUE(resp->capabilities & cap::kLongPassword);  // no extended types asked
  EXPECT_FALSE(resp->capabilities & cap::kSsl);
  ASSERT_EQ(login.onMessage(ok(status::kAutocommit | status::kInTrans), 2, 2), ClientNext::kDone);
  EXPECT_EQ(login.statusFlags(), status::kAutocommit | status::kInTrans);
  EXPECT_EQ(login.capabilities(), kWanted);
}

TEST(ClientLogin, ExtendedTypeInfoFromAMariadbServer) {
  ClientLogin login(clientOptions(false, true));
  login.start();
  login.onMessage(greeting(), 0, 0);
  auto resp = decodeHandshakeResponse41(packetsIn(take(login)).at(0).payload);
  ASSERT_TRUE(resp);
  EXPECT_FALSE(resp->capabilities & cap::kLongPassword);
  EXPECT_EQ(resp->mariadb_capabilities, mariadb_cap::kExtendedTypeInfo);
  EXPECT_EQ(login.mariadbCapabilities(), mariadb_cap::kExtendedTypeInfo);
  // A MySQL server (CLIENT_LONG_PASSWORD set): nothing extended.
  ClientLogin mysql(clientOptions(false, true));
  mysql.start();
  mysql.onMessage(greeting(kNativePasswordPlugin, true, false), 0, 0);
  EXPECT_EQ(mysql.mariadbCapabilities(), 0u);
  EXPECT_TRUE(mysql.capabilities() & cap::kLongPassword);
}

TEST(ClientLogin, ServerErrors) {
  ClientLogin at_greeting(clientOptions());
  at_greeting.start();
  ASSERT_EQ(at_greeting.onMessage(err(1040, "Too many connections"), 0, 0), ClientNext::kFailed);
  EXPECT_EQ(at_greeting.error().kind, Kind::kServer);
  EXPECT_EQ(at_greeting.error().server.error_code, 1040);

  ClientLogin denied(clientOptions());
  denied.start();
  denied.onMessage(greeting(), 0, 0);
  ASSERT_EQ(denied.onMessage(err(1045, "Access denied"), 2, 2), ClientNext::kFailed);
  EXPECT_EQ(denied.error().kind, Kind::kServer);
  EXPECT_EQ(denied.error().server.sql_state, "28000");
  EXPECT_EQ(denied.error().server.message, "Access denied");
}

TEST(ClientLogin, AuthSwitches) {
  for (auto plugin : {kNativePasswordPlugin, kCachingSha2Plugin}) {
    SCOPED_TRACE(plugin);
    ClientLogin login(clientOptions());
    login.start();
    login.onMessage(greeting(), 0, 0);
    take(login);
    const std::string fresh = "zyxwvutsrqponmlkjihg";
    ASSERT_EQ(login.onMessage(authSwitch(plugin, fresh), 2, 2), ClientNext::kRead);
    auto packets = packetsIn(take(login));
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(packets[0].seq, 3);
    const std::string want = plugin == kNativePasswordPlugin ? nativePasswordResponse("secret", fresh)
                                                              : cachingSha2Response("secret", fresh);
    EXPECT_EQ(asText(packets[0].payload), want);
    EXPECT_EQ(login.onMessage(ok(), 4, 4), ClientNext::kDone);
  }
  ClientLogin other(clientOptions());
  other.start();
  other.onMessage(greeting(), 0, 0);
  ASSERT_EQ(other.onMessage(authSwitch("auth_gssapi_client", "x"), 2, 2), ClientNext::kFailed);
  EXPECT_EQ(other.error().kind, Kind::kUnsupported);
  EXPECT_NE(other.error().message.find("auth_gssapi_client"), std::string::npos);
}

TEST(ClientLogin, CachingSha2FastAndFullAuth) {
  ClientLogin fast(clientOptions());
  fast.start();
  fast.onMessage(greeting(kCachingSha2Plugin), 0, 0);
  auto resp = decodeHandshakeResponse41(packetsIn(take(fast)).at(0).payload);
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->auth_plugin_name, kCachingSha2Plugin);
  EXPECT_EQ(resp->auth_response, cachingSha2Response("secret", kClientScramble));
  ASSERT_EQ(fast.onMessage(test::hex("0103"), 2, 2), ClientNext::kRead);
  EXPECT_TRUE(take(fast).empty());
  EXPECT_EQ(fast.onMessage(ok(), 3, 3), ClientNext::kDone);

  // Full authentication sends the password in clear: only over TLS.
  ClientLogin plaintext(clientOptions());
  plaintext.start();
  plaintext.onMessage(greeting(kCachingSha2Plugin), 0, 0);
  ASSERT_EQ(plaintext.onMessage(test::hex("0104"), 2, 2), ClientNext::kFailed);
  EXPECT_EQ(plaintext.error().kind, Kind::kUnsupported);

  ClientLogin tls(clientOptions(true));
  tls.start();
  ASSERT_EQ(tls.onMessage(greeting(kCachingSha2Plugin), 0, 0), ClientNext::kStartTls);
  take(tls);
  ASSERT_EQ(tls.onTlsStarted(), ClientNext::kRead);
  take(tls);
  ASSERT_EQ(tls.onMessage(test::hex("0104"), 3, 3), ClientNext::kRead);
  auto packets = packetsIn(take(tls));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 4);
  EXPECT_EQ(asText(packets[0].payload), std::string("secret") + '\0');
  EXPECT_EQ(tls.onMessage(ok(), 5, 5), ClientNext::kDone);
}

TEST(ClientLogin, TlsRequestCarriesTheLoginsCapabilities) {
  ClientLogin login(clientOptions(true, true));
  login.start();
  ASSERT_EQ(login.onMessage(greeting(), 0, 0), ClientNext::kStartTls);
  auto packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 1);
  ASSERT_EQ(packets[0].payload.size(), 32u);
  EXPECT_TRUE(isSslRequest(packets[0].payload));
  Reader r(packets[0].payload);
  EXPECT_EQ(*r.u32(), login.capabilities());
  ASSERT_EQ(login.onTlsStarted(), ClientNext::kRead);
  packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 2);
  auto resp = decodeHandshakeResponse41(packets[0].payload);
  ASSERT_TRUE(resp);
  EXPECT_TRUE(resp->capabilities & cap::kSsl);
  EXPECT_EQ(resp->mariadb_capabilities, mariadb_cap::kExtendedTypeInfo);
  EXPECT_EQ(login.onMessage(ok(), 3, 3), ClientNext::kDone);

  ClientLogin no_ssl(clientOptions(true));
  no_ssl.start();
  ASSERT_EQ(no_ssl.onMessage(greeting(kNativePasswordPlugin, false), 0, 0), ClientNext::kFailed);
  EXPECT_EQ(no_ssl.error().kind, Kind::kUnsupported);
}

TEST(ClientLogin, WrongSequenceIds) {
  ClientLogin greeting_seq(clientOptions());
  greeting_seq.start();
  ASSERT_EQ(greeting_seq.onMessage(greeting(), 1, 1), ClientNext::kFailed);
  EXPECT_EQ(greeting_seq.error().kind, Kind::kProtocol);
  EXPECT_EQ(greeting_seq.error().message, "backend sent packets out of order during login");
  for (uint8_t seq : {0, 1, 3, 255}) {
    ClientLogin login(clientOptions());
    login.start();
    login.onMessage(greeting(), 0, 0);
    ASSERT_EQ(login.onMessage(ok(), seq, seq), ClientNext::kFailed) << int(seq);
    EXPECT_EQ(login.error().kind, Kind::kProtocol);
  }
  ClientLogin after_switch(clientOptions());
  after_switch.start();
  after_switch.onMessage(greeting(), 0, 0);
  after_switch.onMessage(authSwitch(kNativePasswordPlugin, kClientScramble), 2, 2);
  EXPECT_EQ(after_switch.onMessage(ok(), 3, 3), ClientNext::kFailed);  // 3 was the proxy's answer
}

TEST(ClientLogin, AtMostFourReplies) {
  ClientLogin login(clientOptions());
  login.start();
  login.onMessage(greeting(kCachingSha2Plugin), 0, 0);
  uint8_t seq = 2;
  ClientNext next = ClientNext::kRead;
  for (int i = 0; i < 4 && next == ClientNext::kRead; ++i) next = login.onMessage(test::hex("0103"), seq, seq), ++seq;
  ASSERT_EQ(next, ClientNext::kFailed);
  EXPECT_EQ(login.error().message, "too many authentication rounds");
}

// Every truncation of every server message, in exact-sized buffers: the
// login fails with a message (or, for a cut that is itself a valid shorter
// packet, goes on), and never reads past the end.
TEST(ClientLogin, EveryTruncationOfEveryServerMessage) {
  struct Step {
    const char* name;
    Bytes greeting;
    Bytes reply;  // the message cut, after the greeting
  };
  const std::vector<Step> steps = {
      {"ok", greeting(), ok()},
      {"err", greeting(), err(1045, "Access denied")},
      {"switch", greeting(), authSwitch(kNativePasswordPlugin, kClientScramble)},
      {"more data", greeting(kCachingSha2Plugin), test::hex("0103")},
  };
  for (const auto& step : steps) {
    const Bytes& hs = step.greeting;
    for (size_t n = 0; n < hs.size(); ++n) {
      SCOPED_TRACE(std::string("greeting cut at ") + std::to_string(n));
      ClientLogin login(clientOptions());
      login.start();
      test::ExactBuffer cut(hs, n);
      ASSERT_EQ(login.onMessage(cut.view(), 0, 0), ClientNext::kFailed);
      EXPECT_NE(login.error().kind, Kind::kServer);
    }
    for (size_t n = 0; n < step.reply.size(); ++n) {
      SCOPED_TRACE(std::string(step.name) + " cut at " + std::to_string(n));
      ClientLogin login(clientOptions());
      login.start();
      login.onMessage(hs, 0, 0);
      test::ExactBuffer cut(step.reply, n);
      auto next = login.onMessage(cut.view(), 2, 2);
      // "fe" + a cut plugin name without its NUL is malformed; "fe 'plugin' NUL" with
      // a cut scramble is a valid switch (it is string<EOF>): answered.
      EXPECT_TRUE(next == ClientNext::kFailed || next == ClientNext::kRead) << int(next);
      // A cut ERR may still be an ERR (code only, the SQLSTATE marker optional).
      if (next == ClientNext::kFailed && std::string(step.name) != "err") {
        EXPECT_NE(login.error().kind, Kind::kServer);
      }
    }
  }
}

}  // namespace
}  // namespace sp::protocol
