// The client side of the connection phase (the proxy logging in to a
// backend) as a state machine without I/O: the greeting, an optional
// SSLRequest and TLS, HandshakeResponse41, then auth switches
// (mysql_native_password, caching_sha2_password) and caching_sha2's more-data
// packets (fast auth; full auth sends the password, over TLS only) until OK
// or ERR. The caller sends output() and does what `Next` says:
//
//   start() ──► kRead (the greeting)
//   onMessage(greeting) ──► [tls: SSLRequest queued, kStartTls ──onTlsStarted()──►]
//                           response queued, kRead
//   onMessage(reply) ──► OK: kDone | ERR: kFailed (server error)
//                      | auth switch / 0x04 over TLS: answer queued, kRead
//                      | 0x03: kRead (the OK follows)
//
// Every server packet must carry the expected sequence id; a greeting the
// proxy cannot use, a packet out of order or more than four authentication
// rounds end in kFailed with a message.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

struct ClientLoginOptions {
  uint32_t capabilities = 0;         // wanted; kept where the server offers them
  bool extended_type_info = false;   // ask a MariaDB server for extended type info
  bool tls = false;                  // SSLRequest and TLS before the response
  uint8_t character_set = 0;
  uint32_t max_packet_size = 1u << 30;
  std::string user;
  std::string password;
  std::string database;              // sent when CLIENT_CONNECT_WITH_DB is wanted
  std::vector<std::pair<std::string, std::string>> attributes;
};

struct ClientLoginError {
  enum class Kind : uint8_t {
    kServer,       // the server's ERR: `server`
    kProtocol,     // malformed or out-of-order packets
    kUnsupported,  // the server wants what the proxy cannot do here (plugin, TLS)
  };
  Kind kind = Kind::kProtocol;
  ErrPacket server;
  std::string message;
};

class ClientLogin {
 public:
  enum class Next : uint8_t {
    kRead,      // send output(), read the server's next message: onMessage()
    kStartTls,  // send output() (the SSLRequest), start TLS as the client: onTlsStarted()
    kDone,      // logged in
    kFailed,    // error()
  };

  explicit ClientLogin(ClientLoginOptions options);
  Next start() { return Next::kRead; }
  Next onMessage(ByteView payload, uint8_t first_seq, uint8_t last_seq);
  Next onTlsStarted();

  Bytes& output() { return out_; }
  // After the greeting.
  const std::optional<HandshakeV10>& greeting() const { return greeting_; }
  // Negotiated (after the greeting).
  uint32_t capabilities() const { return capabilities_; }
  uint32_t mariadbCapabilities() const { return mariadb_capabilities_; }
  // The final OK's status flags (kDone).
  uint16_t statusFlags() const { return status_flags_; }
  const ClientLoginError& error() const { return error_; }

 private:
  enum class State : uint8_t { kGreeting, kTls, kReply, kDone, kFailed };

  Next onGreeting(ByteView payload);
  Next sendResponse();
  Next onReply(ByteView payload);
  Next onAuthSwitch(ByteView payload);
  Next onMoreData(ByteView payload);
  Next answer(std::string_view data);
  Next readMore();
  Next fail(ClientLoginError::Kind kind, std::string message);
  Next failWithServerError(ByteView err_payload);

  ClientLoginOptions options_;
  State state_ = State::kGreeting;
  uint8_t seq_ = 0;  // the id of the next packet, either way
  int rounds_ = 0;
  bool tls_active_ = false;
  std::optional<HandshakeV10> greeting_;
  uint32_t capabilities_ = 0;
  uint32_t mariadb_capabilities_ = 0;
  uint16_t status_flags_ = 0;
  ClientLoginError error_;
  Bytes out_;
};

}  // namespace sp::protocol
