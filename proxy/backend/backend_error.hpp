// Why a backend operation failed, carried as a value up to the session,
// which turns it into the client's ERR packet.
#pragma once
#include <cstdint>
#include <string>

#include "protocol/generic_packets.hpp"

namespace sp::proxy {

struct BackendError {
  enum class Kind : uint8_t {
    kConnect,      // could not connect or log in
    kIo,           // the connection broke (backend died, network)
    kServer,       // the server answered with an ERR packet (connection still usable)
    kProtocol,     // the server sent something we could not understand
    kPoolTimeout,  // no connection became free in time
    kDown,         // the backend is marked down (recent connect failures)
    kSwitching,    // the backend's primary was being switched for longer than the hold allows
  };
  Kind kind = Kind::kIo;
  uint16_t code = 0;       // server error code for kServer
  std::string sql_state;   // server SQLSTATE for kServer
  std::string message;

  bool connectionUsable() const { return kind == Kind::kServer; }
  // The server's own ERR (kServer) as the client should see it.
  protocol::ErrPacket toErrPacket() const { return protocol::ErrPacket{code, sql_state, message}; }
};

}  // namespace sp::proxy
