// One row of the proxy's SHOW PROCESSLIST: a client session as MariaDB
// shows a connection (session_processlist.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace sp::proxy {

struct ProcessRow {
  uint32_t id = 0;  // the connection id the handshake gave the client (KILL takes it)
  std::string user, host, db, command, info;
  bool has_info = false;  // Info is NULL when idle
  int64_t seconds = 0;    // in this state since
};

}  // namespace sp::proxy
