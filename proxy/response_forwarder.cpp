#include "proxy/response_forwarder.hpp"

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"

namespace sp::proxy {

namespace {
// Flush to the client at least this often even if the backend keeps data coming.
constexpr size_t kFlushThreshold = 256 * 1024;

// An OK packet that carries session-tracking data: the data is taken into
// `result` and the OK re-encoded as the client expects it (the proxy does not
// offer CLIENT_SESSION_TRACK to clients). False when it does not decode.
bool takeSessionChanges(protocol::ByteView payload, uint32_t backend_capabilities, uint32_t client_capabilities,
                        ForwardResult& result, protocol::Bytes& reencoded) {
  auto ok = protocol::decodeOkPacket(payload, backend_capabilities);
  if (!ok || !protocol::decodeSessionChanges(protocol::asBytes(ok->session_state_info), result.changes)) {
    return false;
  }
  ok->status_flags &= ~protocol::status::kSessionStateChanged;
  ok->session_state_info.clear();
  reencoded.clear();
  protocol::encode(*ok, client_capabilities, reencoded, payload[0]);
  return true;
}

}  // namespace

awaitable<ForwardResult> forwardResponse(BackendConnection& backend, PacketStream& client,
                                         protocol::ResponseKind kind, uint32_t client_capabilities,
                                         uint8_t first_client_seq) {
  using protocol::ResponseEvent;
  ForwardResult result;
  const bool translate_eof = (client_capabilities & protocol::cap::kDeprecateEof) &&
                             !(backend.capabilities() & protocol::cap::kDeprecateEof);
  protocol::ResponseTracker tracker(kind, backend.capabilities(), backend.mariadbCapabilities());
  PacketStream& in = backend.stream();
  uint8_t seq = first_client_seq;
  protocol::Bytes scratch;
  while (!tracker.done()) {
    if (!in.hasBufferedPacket() && client.pendingOutput() > 0 && client.pendingOutput() < kFlushThreshold) {
      // Mid-response and the read buffer ran dry: the rest is often already
      // in the kernel. Take it now, so it leaves in the same send.
      while (!in.hasBufferedPacket() && in.tryFill()) {
      }
    }
    if (!in.hasBufferedPacket() || client.pendingOutput() >= kFlushThreshold) {
      // About to wait for the backend (or holding a lot): let the client have what we have.
      if (client.pendingOutput() > 0 && !co_await client.flush()) result.client_failed = true;
      if (result.client_failed) break;
    }
    auto msg = co_await in.read();
    if (!msg) {
      result.backend_failed = true;
      break;
    }
    auto ev = tracker.onPacket(msg->payload);
    if (!ev) {
      result.backend_failed = true;
      break;
    }
    result.server_error = (*ev == ResponseEvent::kErr);
    if (*ev == ResponseEvent::kRow) ++result.rows;
    if (result.server_error) {
      // Errors are rare: decoded for the session's diagnostics area (SHOW WARNINGS).
      if (auto err = protocol::decodeErrPacket(msg->payload)) {
        result.error_code = err->error_code;
        result.error = std::move(*err);
      }
    }
    if (*ev == ResponseEvent::kOk && (tracker.statusFlags() & protocol::status::kSessionStateChanged) &&
        (backend.capabilities() & protocol::cap::kSessionTrack)) {
      if (takeSessionChanges(msg->payload, backend.capabilities(), client_capabilities, result, scratch)) {
        seq = client.append(scratch, seq);
        continue;
      }
      result.changes_unreadable = true;
    }
    if (translate_eof && (*ev == ResponseEvent::kColumnsEof || *ev == ResponseEvent::kParamsEof)) continue;
    if (translate_eof && *ev == ResponseEvent::kRowsEnd) {
      // Classic EOF -> the OK packet with a 0xfe header that ends rows under DEPRECATE_EOF.
      protocol::OkPacket ok;
      ok.status_flags = tracker.statusFlags();
      ok.warnings = tracker.warnings();
      scratch.clear();
      protocol::encode(ok, client_capabilities, scratch, protocol::kEofHeader);
      seq = client.append(scratch, seq);
      continue;
    }
    seq = client.append(msg->payload, seq);
  }
  result.status_flags = tracker.statusFlags();
  result.last_insert_id = tracker.lastInsertId();
  result.warnings = tracker.warnings();
  result.next_client_seq = seq;
  if (result.backend_failed) {
    backend.markBroken();
  } else if (result.client_failed) {
    // The rest of the response was never read: the connection is not reusable.
    backend.markBroken();
  } else {
    backend.touch();
    backend.noteStatus(result.status_flags);
  }
  co_return result;
}

}  // namespace sp::proxy
