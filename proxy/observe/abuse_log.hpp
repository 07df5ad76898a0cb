// Warnings about hostile clients, rate-limited per kind: a flood of refused
// connections must not become a flood of log lines (and disk I/O). The first
// event of a kind is logged at once; later ones at most every 10 s, with the
// number of events not logged in between.
#pragma once
#include <cstdint>
#include <string_view>

namespace sp::proxy {

enum class AbuseKind : uint8_t {
  kMaxConnections,     // refused: server.max_connections reached
  kPerHost,            // refused: server.max_connections_per_host reached
  kHandshakeTimeout,   // closed: login not done within server.handshake_timeout_ms
  kHandshakeTooLarge,  // closed: packet over server.max_handshake_packet_bytes before login
  kIdleTimeout,        // closed: idle past its wait_timeout (server.wait_timeout_s, or the session's SET)
  kWriteTimeout,       // closed: took no bytes of its answer for server.net_write_timeout_s
  kPinnedPerUser,      // refused: users[].max_pinned_connections reached
  kMergeMemory,        // refused: scatter.max_merge_bytes_total reached
  kCount,
};

// Thread-safe; `detail` is logged with the event that gets logged.
void noteAbuse(AbuseKind kind, std::string_view detail);

}  // namespace sp::proxy
