// Route execution: one command sent on one shard channel, its answer streamed
// to the client packet by packet without decoding rows: rewrites sequence
// ids, translates classic EOF packets for clients that negotiated
// CLIENT_DEPRECATE_EOF, takes the server's session-tracking reports out of OK
// packets, and flushes to the client whenever the shard's buffered input runs
// dry (large batches, bounded memory). Passthrough statements, single-shard
// routes, COM_INIT_DB, COM_FIELD_LIST, COM_STATISTICS and prepared executes
// all run through it.
#pragma once
#include <cstdint>
#include <optional>

#include "protocol/generic_packets.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/session_track.hpp"
#include "proxy/net/client_sink.hpp"
#include "proxy/exec/shard_channel.hpp"

namespace sp::proxy {

struct ForwardResult {
  bool backend_failed = false;  // the backend connection broke or sent garbage mid-response
  bool timed_out = false;       // ... because no packet came within the channel's timeout (its query was killed)
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
  // LOAD DATA LOCAL (the server asked for the client's file):
  bool infile_refused = false;     // the session may not send files: the server got an empty one, the
                                   // client an ERR (4166) instead of its OK
  bool infile_over_limit = false;  // the file passed limits.local_infile_max_bytes: the connection was
                                   // cut (the server rolls the statement back), the client gets an error
  uint64_t infile_bytes = 0;       // file bytes relayed
};

// What relaying a client's file did (LocalInfileSource::relay).
struct InfileRelayed {
  bool client_failed = false;   // the client went away or broke the protocol
  bool backend_failed = false;  // sending to the server failed
  bool over_limit = false;      // more than the limit: the rest was read and dropped
  uint64_t bytes = 0;
  uint8_t next_client_seq = 0;  // after the client's closing empty packet
};

// The client's side of LOAD DATA LOCAL INFILE (the session implements it).
class LocalInfileSource {
 public:
  virtual ~LocalInfileSource() = default;
  // Whether this session may send a file: users[].local_infile and the
  // client's CLIENT_LOCAL_FILES.
  virtual bool allowed() const = 0;
  // Sends the server's request (0xfb + file name) to the client at
  // `client_seq`, then relays the client's packets to `shard` from
  // `shard_seq` on, up to and including its closing empty packet, one packet
  // at a time (memory: one packet).
  virtual awaitable<InfileRelayed> relay(protocol::ByteView request, uint8_t client_seq, ShardChannel& shard,
                                         uint8_t shard_seq) = 0;
};

// Sends the command `payload` (answered as `kind`) and forwards the answer.
// A send that fails is a backend failure with nothing forwarded.
// final_extra_status: status flags added to the packet that ends the answer
// (its last OK or rows-ending EOF), e.g. SERVER_MORE_RESULTS_EXIST when the
// session runs a multi-statement packet one statement at a time and more
// results follow, as the server would flag them (multi_statement.cpp).
// ForwardResult::status_flags stays the server's.
awaitable<ForwardResult> routeCommand(ShardChannel& shard, protocol::ByteView payload, protocol::ResponseKind kind,
                                      ClientSink& client, uint32_t client_capabilities, uint8_t first_client_seq,
                                      uint16_t final_extra_status = 0, LocalInfileSource* infile = nullptr);
// The same for a COM_QUERY of `sql`.
awaitable<ForwardResult> routeQuery(ShardChannel& shard, std::string_view sql, ClientSink& client,
                                    uint32_t client_capabilities, uint8_t first_client_seq,
                                    uint16_t final_extra_status = 0, LocalInfileSource* infile = nullptr);
// Forwards the answer to what was sent on `shard` (and flushed).
// `infile`: who relays a LOAD DATA LOCAL file (null: none may be sent; the
// server gets an empty file and the result says infile_refused).
awaitable<ForwardResult> forwardAnswer(ShardChannel& shard, ClientSink& client, uint32_t client_capabilities,
                                       uint8_t first_client_seq, uint16_t final_extra_status = 0,
                                       LocalInfileSource* infile = nullptr);

}  // namespace sp::proxy
