// Streams one backend response to the client packet by packet without
// decoding rows: rewrites sequence ids, translates classic EOF packets for
// clients that negotiated CLIENT_DEPRECATE_EOF, and flushes to the client
// whenever the backend's buffered input runs dry (large batches, bounded memory).
#pragma once
#include <cstdint>
#include <optional>

#include "protocol/generic_packets.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/session_track.hpp"
#include "proxy/backend_connection.hpp"
#include "proxy/packet_stream.hpp"

namespace sp::proxy {

struct ForwardResult {
  bool backend_failed = false;  // the backend connection broke or sent garbage mid-response
  bool client_failed = false;   // the client went away
  bool server_error = false;    // the (last) result was an ERR packet
  uint16_t error_code = 0;      // its error code
  uint64_t rows = 0;            // result set rows forwarded
  uint16_t status_flags = 0;
  uint64_t last_insert_id = 0;  // from the final OK (0: the statement generated none)
  uint16_t warnings = 0;        // of the final OK/EOF
  std::optional<protocol::ErrPacket> error;  // the ERR that ended the response, decoded
  uint8_t next_client_seq = 0;  // sequence id for a packet appended after the response
  // What the server reported of the statement's session changes (backends
  // that track them); the client gets the OK packets without them.
  protocol::SessionChanges changes;
  bool changes_unreadable = false;  // a report that did not decode: state unknown
};

// final_extra_status: status flags added to the packet that ends the
// response (its last OK or rows-ending EOF), e.g. SERVER_MORE_RESULTS_EXIST
// when the proxy runs a multi-statement packet one statement at a time and
// more results follow, as the server would flag them (multi_statement.cpp).
// result.status_flags stays the backend's.
awaitable<ForwardResult> forwardResponse(BackendConnection& backend, PacketStream& client,
                                         protocol::ResponseKind kind, uint32_t client_capabilities,
                                         uint8_t first_client_seq = 1, uint16_t final_extra_status = 0);

}  // namespace sp::proxy
