// The server side of the connection phase (a client logging in to the proxy)
// as a state machine without I/O: greeting, optional SSLRequest and TLS,
// HandshakeResponse41, the plugin exchange, the password check, and the ERR
// of every refusal. The caller moves bytes and answers the machine's
// questions; `Next` says what to do after sending output():
//
//   start() ──► kRead (greeting queued; readExactly() when TLS is offered:
//               the ClientHello may follow the SSLRequest at once)
//   onMessage(SSLRequest) ──► kStartTls ──onTlsStarted()──► kRead
//   onMessage(HandshakeResponse41) ──► kLookupAccount ──onAccount()──►
//     mysql_native_password, or no plugin:     check ──► kDone | kFailed (1045)
//     another plugin, or caching_sha2 in plaintext:
//                                   AuthSwitchRequest(native) ──► kRead ──► check
//     caching_sha2_password over TLS (the proxy speaks it there):
//       empty answer: AuthSwitchRequest(caching_sha2) ──► kRead, then:
//       scramble matches a clear-text password: 0x01 0x03 (fast auth) ──► kDone
//       otherwise: 0x01 0x04 (full auth) ──► kRead (password + NUL, over TLS) ──► check
//
// Every client message must carry the sequence id the machine expects, else
// 1156 "Got packets out of order" under that id and kFailed, as MariaDB does.
// Malformed responses get 1043 "Bad handshake"; a message over the caller's
// size limit (onTooLarge) too. kDone leaves the final OK to the caller
// (its own checks may still refuse: nextSequenceId() is the OK's id).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "protocol/change_user.hpp"
#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// What the machine must know of the account a client names; the caller
// looks it up (protocol/ knows no configuration).
struct LoginAccount {
  bool exists = false;
  std::string password;       // clear text, or empty when password_hash is set
  std::string password_hash;  // "*HEX" (mysql_native_password hash), or empty
  bool require_tls = false;
  // The account's client-certificate requirement is not met by this
  // connection (no TLS, no verified certificate, another subject or issuer):
  // the caller judges it, having the TLS session; refused after the password,
  // with the same 1045, as MariaDB does for REQUIRE X509 / SUBJECT / ISSUER.
  bool certificate_refused = false;
};

struct ServerLoginOptions {
  std::string server_version;
  uint32_t connection_id = 0;
  std::string scramble;               // 20 bytes (makeScramble())
  uint32_t capabilities = 0;          // what the server supports; the greeting clears CLIENT_LONG_PASSWORD as MariaDB does
  bool tls_available = false;         // CLIENT_SSL offered
  uint32_t mariadb_capabilities = 0;  // offered MariaDB extended capabilities
  uint8_t character_set = 0;
  uint16_t status_flags = 0;
  std::string client_host;            // for the 1045 message
};

// Which caching_sha2_password path a login over TLS took (for logs).
enum class CachingSha2Auth : uint8_t { kNone, kFast, kFull };

enum class LoginRefusal : uint8_t {
  kNone,
  kTooLarge,        // 1043: a message over the caller's limit
  kOutOfOrder,      // 1156: a message with another sequence id than expected
  kBadHandshake,    // 1043: a malformed or pre-4.1 response
  kTlsUnavailable,  // 1043: an SSLRequest where TLS is not offered
  kAccessDenied,    // 1045: unknown account or wrong password
  kTlsRequired,     // 1045: an account with require_tls over plaintext
  kCertificateRequired,  // 1045: an account whose client-certificate requirement is not met
};

class ServerLogin {
 public:
  enum class Next : uint8_t {
    kRead,           // send output(), read the client's next message: onMessage()
    kStartTls,       // send output(), start TLS as the server: onTlsStarted()
    kLookupAccount,  // look up username(): onAccount()
    kDone,           // authenticated: send output() and then the final OK (nextSequenceId())
    kFailed,         // send output() (an ERR, unless the client cannot be answered) and stop: refusal()
  };

  // A new connection: start() queues the greeting.
  explicit ServerLogin(ServerLoginOptions options);
  // COM_CHANGE_USER on an authenticated connection: the command's
  // credentials checked with the connection's scramble; `reply_seq` is the
  // id of the server's first answer. start() asks for the account.
  static ServerLogin changeUser(ServerLoginOptions options, bool tls_active, const ChangeUser& change, uint8_t reply_seq);

  Next start();
  Next onMessage(ByteView payload, uint8_t first_seq, uint8_t last_seq);
  Next onTooLarge();
  // The framing found a sequence gap inside a message; `expected_seq` is the id it wanted.
  Next onOutOfOrder(uint8_t expected_seq);
  Next onTlsStarted();
  Next onAccount(const LoginAccount& account);

  // Framed packets to send before acting on Next; the caller takes and clears them.
  Bytes& output() { return out_; }
  // kRead: read no byte past the next message (TLS may start right after it).
  bool readExactly() const { return state_ == State::kResponse && options_.tls_available && !tls_active_; }
  bool tlsActive() const { return tls_active_; }
  uint8_t nextSequenceId() const { return seq_; }
  LoginRefusal refusal() const { return refusal_; }
  CachingSha2Auth cachingSha2Auth() const { return sha2_auth_; }

  // After kLookupAccount: who logs in.
  const std::string& username() const { return username_; }
  // After kDone, for a new connection: the client's response and what was negotiated.
  const HandshakeResponse41& response() const { return response_; }
  uint32_t negotiatedCapabilities() const;
  uint32_t negotiatedMariadbCapabilities() const;
  const std::string& scramble() const { return options_.scramble; }

 private:
  enum class State : uint8_t {
    kGreeting, kResponse, kAfterTls, kAccount, kSwitchAnswer, kSha2SwitchAnswer, kSha2Password, kDone, kFailed
  };
  enum class Proof : uint8_t { kNativeScramble, kClearText };

  Next onResponse(ByteView payload);
  Next authenticate();
  Next cachingSha2(std::string response);
  Next check(Proof proof, std::string_view response);
  Next send(ByteView payload, State then);
  Next fail(LoginRefusal why, uint16_t code, const char* sql_state, std::string message, uint8_t seq);

  ServerLoginOptions options_;
  State state_ = State::kGreeting;
  uint8_t seq_ = 0;  // the id of the next packet, either way
  bool tls_active_ = false;
  LoginRefusal refusal_ = LoginRefusal::kNone;
  CachingSha2Auth sha2_auth_ = CachingSha2Auth::kNone;
  HandshakeResponse41 response_;
  std::string username_;
  std::string plugin_;         // empty: mysql_native_password
  std::string auth_response_;  // the client's latest answer
  LoginAccount account_;
  Bytes out_;
};

}  // namespace sp::protocol
