// The proxy as a server in the connection phase (protocol/server_login.hpp),
// driven by scripted client bytes: every plugin path the proxy supports, the
// ERR of every refusal with its sequence id, wrong sequence ids at every
// step, and every truncation of the client's bytes (the machine waits or
// refuses cleanly, never crashes).
#include "protocol/server_login.hpp"

#include <gtest/gtest.h>

#include "login_script.hpp"
#include "protocol/auth.hpp"
#include "protocol/constants.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::errIn;
using test::packetsIn;
using Next = ServerLogin::Next;

constexpr uint32_t kServerCaps = cap::kLongPassword | cap::kFoundRows | cap::kConnectWithDb | cap::kProtocol41 |
                                 cap::kSecureConnection | cap::kMultiStatements | cap::kMultiResults |
                                 cap::kPluginAuth | cap::kConnectAttrs | cap::kPluginAuthLenencClientData |
                                 cap::kDeprecateEof;
const std::string kScramble = "abcdefghij0123456789";

ServerLoginOptions options(bool tls) {
  ServerLoginOptions o;
  o.server_version = "11.0.0-shardproxy";
  o.connection_id = 42;
  o.scramble = kScramble;
  o.capabilities = kServerCaps;
  o.tls_available = tls;
  o.mariadb_capabilities = mariadb_cap::kExtendedTypeInfo;
  o.character_set = kCollationUtf8mb4GeneralCi;
  o.status_flags = status::kAutocommit;
  o.client_host = "10.0.0.1";
  return o;
}

LoginAccount account(std::string password, bool require_tls = false) {
  LoginAccount a;
  a.exists = true;
  a.password = std::move(password);
  a.require_tls = require_tls;
  return a;
}

LoginAccount certificateRefused(std::string password) {
  LoginAccount a = account(std::move(password));
  a.certificate_refused = true;
  return a;
}

Bytes response(std::string_view plugin, std::string auth, uint32_t extra_caps = 0) {
  HandshakeResponse41 r;
  r.capabilities = cap::kProtocol41 | cap::kSecureConnection | cap::kPluginAuth | cap::kPluginAuthLenencClientData |
                   cap::kConnectWithDb | cap::kConnectAttrs | cap::kMultiStatements | extra_caps;
  r.max_packet_size = 1u << 24;
  r.character_set = 33;
  r.username = "app";
  r.auth_response = std::move(auth);
  r.database = "im";
  r.auth_plugin_name = std::string(plugin);
  r.attributes = {{"_client_name", "test"}};
  Bytes out;
  encode(r, out);
  return out;
}

Bytes nativeResponse(std::string_view password) {
  return response(kNativePasswordPlugin, nativePasswordResponse(password, kScramble));
}

Bytes sslRequest() {
  Bytes out;
  encode(SslRequest{cap::kProtocol41 | cap::kSecureConnection | cap::kPluginAuth, 1u << 24, 33, 0}, out);
  return out;
}

// Takes the machine's output and clears it.
Bytes take(ServerLogin& login) {
  Bytes out = std::move(login.output());
  login.output().clear();
  return out;
}

TEST(ServerLogin, GreetingOffersWhatTheOptionsSay) {
  for (bool tls : {false, true}) {
    ServerLogin login(options(tls));
    ASSERT_EQ(login.start(), Next::kRead);
    EXPECT_EQ(login.readExactly(), tls);
    auto packets = packetsIn(take(login));
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(packets[0].seq, 0);
    auto hs = decodeHandshakeV10(packets[0].payload);
    ASSERT_TRUE(hs);
    EXPECT_EQ(hs->auth_plugin_data, kScramble);
    EXPECT_EQ(hs->connection_id, 42u);
    EXPECT_EQ(hs->auth_plugin_name, kNativePasswordPlugin);
    EXPECT_FALSE(hs->capabilities & cap::kLongPassword);  // MariaDB's "CLIENT_MYSQL" clear
    EXPECT_EQ((hs->capabilities & cap::kSsl) != 0, tls);
    EXPECT_EQ(hs->mariadb_capabilities, mariadb_cap::kExtendedTypeInfo);
  }
}

TEST(ServerLogin, NativePassword) {
  ServerLogin login(options(false));
  login.start();
  take(login);
  ASSERT_EQ(login.onMessage(nativeResponse("pw"), 1, 1), Next::kLookupAccount);
  EXPECT_EQ(login.username(), "app");
  ASSERT_EQ(login.onAccount(account("pw")), Next::kDone);
  EXPECT_TRUE(take(login).empty());
  EXPECT_EQ(login.nextSequenceId(), 2);
  EXPECT_EQ(login.response().database, "im");
  EXPECT_EQ(login.negotiatedCapabilities() & cap::kMultiStatements, cap::kMultiStatements);
  EXPECT_TRUE(login.negotiatedCapabilities() & cap::kConnectAttrs);
  EXPECT_FALSE(login.negotiatedCapabilities() & cap::kLocalFiles);
}

TEST(ServerLogin, WrongPasswordUnknownUserAndRequireTls) {
  struct Case {
    const char* name;
    std::optional<LoginAccount> account;
    LoginRefusal refusal;
  };
  for (const auto& c : {Case{"wrong password", account("other"), LoginRefusal::kAccessDenied},
                        Case{"unknown user", std::nullopt, LoginRefusal::kAccessDenied},
                        Case{"require_tls", account("pw", true), LoginRefusal::kTlsRequired},
                        // The certificate is judged after the password, as MariaDB does: a wrong
                        // password is kAccessDenied whatever the certificate.
                        Case{"certificate requirement unmet", certificateRefused("pw"),
                             LoginRefusal::kCertificateRequired},
                        Case{"certificate unmet, wrong password", certificateRefused("other"),
                             LoginRefusal::kAccessDenied}}) {
    SCOPED_TRACE(c.name);
    ServerLogin login(options(false));
    login.start();
    take(login);
    ASSERT_EQ(login.onMessage(nativeResponse("pw"), 1, 1), Next::kLookupAccount);
    ASSERT_EQ(login.onAccount(c.account.value_or(LoginAccount{})), Next::kFailed);
    EXPECT_EQ(login.refusal(), c.refusal);
    auto err = errIn(take(login));
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, 1045);
    EXPECT_EQ(err->seq, 2);
    EXPECT_EQ(err->message, "Access denied for user 'app'@'10.0.0.1' (using password: YES)");
  }
}

TEST(ServerLogin, EmptyPasswordSaysUsingPasswordNo) {
  ServerLogin login(options(false));
  login.start();
  take(login);
  ASSERT_EQ(login.onMessage(response(kNativePasswordPlugin, ""), 1, 1), Next::kLookupAccount);
  ASSERT_EQ(login.onAccount(account("pw")), Next::kFailed);
  auto err = errIn(take(login));
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("(using password: NO)"), std::string::npos);
  // An account without a password accepts the empty answer.
  ServerLogin empty(options(false));
  empty.start();
  empty.onMessage(response(kNativePasswordPlugin, ""), 1, 1);
  EXPECT_EQ(empty.onAccount(account("")), Next::kDone);
}

TEST(ServerLogin, PasswordHashAccount) {
  ServerLogin login(options(false));
  login.start();
  login.onMessage(nativeResponse("pw"), 1, 1);
  LoginAccount a;
  a.exists = true;
  a.password_hash = nativePasswordHash("pw");
  EXPECT_EQ(login.onAccount(a), Next::kDone);
}

// A MySQL 8 client offering caching_sha2_password in plaintext is switched
// to mysql_native_password with the greeting's scramble.
TEST(ServerLogin, OtherPluginIsSwitchedToNative) {
  ServerLogin login(options(false));
  login.start();
  take(login);
  login.onMessage(response(kCachingSha2Plugin, cachingSha2Response("pw", kScramble)), 1, 1);
  ASSERT_EQ(login.onAccount(account("pw")), Next::kRead);
  auto packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 2);
  auto sw = decodeAuthSwitchRequest(packets[0].payload);
  ASSERT_TRUE(sw);
  EXPECT_EQ(sw->plugin_name, kNativePasswordPlugin);
  EXPECT_EQ(sw->plugin_data, kScramble);
  const std::string answer = nativePasswordResponse("pw", kScramble);
  ASSERT_EQ(login.onMessage(asBytes(answer), 3, 3), Next::kDone);
  EXPECT_EQ(login.nextSequenceId(), 4);
}

TEST(ServerLogin, TlsThenLogin) {
  ServerLogin login(options(true));
  login.start();
  take(login);
  ASSERT_EQ(login.onMessage(sslRequest(), 1, 1), Next::kStartTls);
  EXPECT_TRUE(take(login).empty());
  ASSERT_EQ(login.onTlsStarted(), Next::kRead);
  EXPECT_FALSE(login.readExactly());
  ASSERT_EQ(login.onMessage(nativeResponse("pw"), 2, 2), Next::kLookupAccount);
  ASSERT_EQ(login.onAccount(account("pw", true)), Next::kDone);  // require_tls satisfied
  EXPECT_EQ(login.nextSequenceId(), 3);
  EXPECT_TRUE(login.tlsActive());
}

TEST(ServerLogin, SslRequestWithoutTlsIsRefused) {
  ServerLogin login(options(false));
  login.start();
  take(login);
  ASSERT_EQ(login.onMessage(sslRequest(), 1, 1), Next::kFailed);
  EXPECT_EQ(login.refusal(), LoginRefusal::kTlsUnavailable);
  auto err = errIn(take(login));
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 1043);
  EXPECT_EQ(err->seq, 2);
}

// A machine whose client asked for TLS and got it (the response comes next, id 2).
ServerLogin afterTls() {
  ServerLogin login(options(true));
  login.start();
  login.onMessage(sslRequest(), 1, 1);
  login.onTlsStarted();
  take(login);
  return login;
}

// caching_sha2_password over TLS against a clear-text password: fast auth.
TEST(ServerLogin, CachingSha2FastAuthOverTls) {
  ServerLogin login = afterTls();
  login.onMessage(response(kCachingSha2Plugin, cachingSha2Response("pw", kScramble)), 2, 2);
  ASSERT_EQ(login.onAccount(account("pw")), Next::kDone);
  auto packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0].seq, 3);
  EXPECT_EQ(test::toHex(packets[0].payload), "0103");
  EXPECT_EQ(login.nextSequenceId(), 4);
  EXPECT_EQ(login.cachingSha2Auth(), CachingSha2Auth::kFast);
}

// A password_hash account (or a wrong scramble answer): full authentication,
// the password sent NUL-terminated through TLS.
TEST(ServerLogin, CachingSha2FullAuthOverTls) {
  for (std::string sent : {"pw", "wrong"}) {
    SCOPED_TRACE(sent);
    ServerLogin login = afterTls();
    login.onMessage(response(kCachingSha2Plugin, cachingSha2Response("pw", kScramble)), 2, 2);
    LoginAccount a;
    a.exists = true;
    a.password_hash = nativePasswordHash("pw");
    ASSERT_EQ(login.onAccount(a), Next::kRead);
    auto packets = packetsIn(take(login));
    ASSERT_EQ(packets.size(), 1u);
    EXPECT_EQ(test::toHex(packets[0].payload), "0104");
    EXPECT_EQ(login.cachingSha2Auth(), CachingSha2Auth::kFull);
    EXPECT_EQ(packets[0].seq, 3);
    std::string password = sent + '\0';
    auto next = login.onMessage(asBytes(password), 4, 4);
    if (sent == "pw") {
      EXPECT_EQ(next, Next::kDone);
      EXPECT_EQ(login.nextSequenceId(), 5);
    } else {
      EXPECT_EQ(next, Next::kFailed);
      auto err = errIn(take(login));
      ASSERT_TRUE(err);
      EXPECT_EQ(err->code, 1045);
      EXPECT_EQ(err->seq, 5);
    }
  }
}

// MariaDB's client plugin answers the greeting's plugin with nothing: the
// proxy asks again for caching_sha2_password.
TEST(ServerLogin, CachingSha2EmptyFirstAnswerIsAskedAgain) {
  ServerLogin login = afterTls();
  login.onMessage(response(kCachingSha2Plugin, ""), 2, 2);
  ASSERT_EQ(login.onAccount(account("pw")), Next::kRead);
  auto packets = packetsIn(take(login));
  ASSERT_EQ(packets.size(), 1u);
  auto sw = decodeAuthSwitchRequest(packets[0].payload);
  ASSERT_TRUE(sw);
  EXPECT_EQ(sw->plugin_name, kCachingSha2Plugin);
  const std::string answer = cachingSha2Response("pw", kScramble);
  ASSERT_EQ(login.onMessage(asBytes(answer), 4, 4), Next::kDone);
  EXPECT_EQ(test::toHex(packetsIn(take(login)).at(0).payload), "0103");
}

TEST(ServerLogin, ChangeUserChecksTheCommandsCredentials) {
  ChangeUser change;
  change.username = "app";
  change.auth_response = nativePasswordResponse("pw", kScramble);
  auto login = ServerLogin::changeUser(options(false), false, change, 1);
  ASSERT_EQ(login.start(), Next::kLookupAccount);
  ASSERT_EQ(login.onAccount(account("pw")), Next::kDone);
  EXPECT_EQ(login.nextSequenceId(), 1);
  auto wrong = ServerLogin::changeUser(options(false), false, change, 1);
  wrong.start();
  ASSERT_EQ(wrong.onAccount(account("nope")), Next::kFailed);
  auto err = errIn(take(wrong));
  ASSERT_TRUE(err);
  EXPECT_EQ(err->seq, 1);
  // Another plugin: switched, the answer expected at the next id.
  change.auth_plugin_name = "some_plugin";
  auto switched = ServerLogin::changeUser(options(false), false, change, 1);
  switched.start();
  ASSERT_EQ(switched.onAccount(account("pw")), Next::kRead);
  EXPECT_EQ(packetsIn(take(switched)).at(0).seq, 1);
  const std::string answer = nativePasswordResponse("pw", kScramble);
  EXPECT_EQ(switched.onMessage(asBytes(answer), 2, 2), Next::kDone);
  EXPECT_EQ(switched.nextSequenceId(), 3);
}

TEST(ServerLogin, MalformedResponseIsBadHandshake) {
  for (const Bytes& payload : {Bytes{}, Bytes{0x01}, test::hex("00000000 00000001 21")}) {
    ServerLogin login(options(false));
    login.start();
    take(login);
    ASSERT_EQ(login.onMessage(payload, 1, 1), Next::kFailed);
    EXPECT_EQ(login.refusal(), LoginRefusal::kBadHandshake);
    auto err = errIn(take(login));
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, 1043);
    EXPECT_EQ(err->seq, 2);
  }
}

TEST(ServerLogin, TooLargeIsBadHandshakeAfterTheExpectedId) {
  ServerLogin login(options(false));
  login.start();
  take(login);
  ASSERT_EQ(login.onTooLarge(), Next::kFailed);
  EXPECT_EQ(login.refusal(), LoginRefusal::kTooLarge);
  auto err = errIn(take(login));
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 1043);
  EXPECT_EQ(err->seq, 2);  // as MariaDB: it has taken the header's id
}

// A script of client messages; `at` = index of the message whose sequence id is wrong.
struct Script {
  const char* name;
  bool tls;
  LoginAccount account;
  std::vector<Bytes> messages;  // payloads, sent with the expected ids
};

std::vector<Script> scripts() {
  const std::string native = nativePasswordResponse("pw", kScramble);
  const std::string sha2 = cachingSha2Response("pw", kScramble);
  LoginAccount hashed;
  hashed.exists = true;
  hashed.password_hash = nativePasswordHash("pw");
  return {
      {"native", false, account("pw"), {nativeResponse("pw")}},
      {"switch", false, account("pw"), {response("other", "x"), Bytes(native.begin(), native.end())}},
      {"tls native", true, account("pw"), {sslRequest(), nativeResponse("pw")}},
      {"tls sha2 full", true, hashed, {sslRequest(), response(kCachingSha2Plugin, sha2), test::bytesOf(std::string("pw") + '\0')}},
  };
}

// Walks `script` through `login`: answers account lookups and TLS starts,
// and hands message k to `send(k)`, which feeds it (with the id and size it
// likes) and returns the next step. Stops when the machine ends or the
// script does; the machine's last output is left for the caller.
template <class Send>
Next walk(const Script& script, ServerLogin& login, Send send) {
  Next next = login.start();
  for (size_t k = 0;;) {
    if (next == Next::kStartTls) {
      next = login.onTlsStarted();
    } else if (next == Next::kLookupAccount) {
      next = login.onAccount(script.account);
    } else if (next == Next::kRead && k < script.messages.size()) {
      take(login);
      next = send(k++);
    } else {
      return next;
    }
  }
}

TEST(ServerLogin, ScriptsSucceedWithTheRightIds) {
  for (const auto& s : scripts()) {
    SCOPED_TRACE(s.name);
    ServerLogin login(options(s.tls));
    auto next = walk(s, login, [&](size_t k) {
      const uint8_t seq = login.nextSequenceId();
      return login.onMessage(s.messages[k], seq, seq);
    });
    EXPECT_EQ(next, Next::kDone);
  }
}

// Every client message of every script, sent with each wrong id: 1156 under
// the expected id, as MariaDB (checked against 10.11: login response, auth
// switch answer, command).
TEST(ServerLogin, WrongSequenceIdAtEveryStep) {
  for (const auto& s : scripts()) {
    for (size_t i = 0; i < s.messages.size(); ++i) {
      for (uint8_t delta : {1, 2, 255, 128}) {
        SCOPED_TRACE(std::string(s.name) + " message " + std::to_string(i) + " delta " + std::to_string(delta));
        ServerLogin login(options(s.tls));
        std::optional<uint8_t> expected;
        auto next = walk(s, login, [&](size_t k) {
          uint8_t seq = login.nextSequenceId();
          if (k == i) {
            expected = seq;
            seq = static_cast<uint8_t>(seq + delta);
          }
          return login.onMessage(s.messages[k], seq, seq);
        });
        ASSERT_EQ(next, Next::kFailed);
        EXPECT_EQ(login.refusal(), LoginRefusal::kOutOfOrder);
        auto err = errIn(take(login));
        ASSERT_TRUE(err);
        ASSERT_TRUE(expected);
        EXPECT_EQ(err->code, 1156);
        EXPECT_EQ(err->message, "Got packets out of order");
        EXPECT_EQ(err->seq, *expected);
      }
    }
  }
}

// Every truncation of every client message, as delivered by the framing: a
// message cut short is a complete but shorter packet, which the machine must
// refuse or take as a (wrong) answer, never crash. Exact-sized buffers let
// the sanitizers catch overreads.
TEST(ServerLogin, EveryTruncationOfEveryMessage) {
  for (const auto& s : scripts()) {
    for (size_t i = 0; i < s.messages.size(); ++i) {
      for (size_t n = 0; n < s.messages[i].size(); ++n) {
        SCOPED_TRACE(std::string(s.name) + " message " + std::to_string(i) + " cut at " + std::to_string(n));
        ServerLogin login(options(s.tls));
        auto next = walk(s, login, [&](size_t k) {
          const uint8_t seq = login.nextSequenceId();
          test::ExactBuffer cut(s.messages[k], k == i ? n : s.messages[k].size());
          return login.onMessage(cut.view(), seq, seq);
        });
        // A cut response or SSL request is a bad handshake (a 32-byte cut of
        // a response can only be an SSL request if it asks for SSL: none do);
        // a cut password or auth answer is a wrong password, except a clear
        // password that lost only its NUL (accepted without it, as before).
        if (next == Next::kDone) {
          EXPECT_EQ(s.messages[i].back(), 0);
          EXPECT_EQ(n + 1, s.messages[i].size());
          continue;
        }
        ASSERT_EQ(next, Next::kFailed);
        auto err = errIn(take(login));
        ASSERT_TRUE(err);
        EXPECT_TRUE(err->code == 1043 || err->code == 1045) << err->code;
      }
    }
  }
}

// The framing's cuts: every prefix of the client's whole byte stream yields
// whole messages only (a cut inside a packet leaves no message: the caller's
// deadline ends such a login), and the machine stays waiting or is done.
TEST(ServerLogin, EveryCutOfTheByteStream) {
  for (const auto& s : scripts()) {
    Bytes stream;
    ServerLogin clean(options(s.tls));
    walk(s, clean, [&](size_t k) {
      const uint8_t seq = clean.nextSequenceId();
      appendFramed(stream, s.messages[k], seq);
      return clean.onMessage(s.messages[k], seq, seq);
    });
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      SCOPED_TRACE(std::string(s.name) + " cut " + std::to_string(cut));
      ServerLogin login(options(s.tls));
      MessageAssembler framing(1u << 16);
      framing.feed(ByteView(stream).first(cut));
      bool starved = false;
      auto next = walk(s, login, [&](size_t) {
        auto m = framing.next();
        EXPECT_TRUE(m);
        if (!m || !*m) {
          starved = true;
          return Next::kRead;
        }
        return login.onMessage((*m)->payload, (*m)->first_sequence_id, (*m)->last_sequence_id);
      });
      if (starved) {
        EXPECT_EQ(next, Next::kRead);
      } else {
        EXPECT_EQ(next, Next::kDone);
        EXPECT_EQ(cut, stream.size());
      }
    }
  }
}

}  // namespace
}  // namespace sp::protocol
