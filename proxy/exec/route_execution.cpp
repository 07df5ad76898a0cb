#include "proxy/exec/route_execution.hpp"

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "proxy/net/client_errors.hpp"

namespace sp::proxy {

namespace {
// Flush to the client at least this often even if the backend keeps data coming.
constexpr size_t kFlushThreshold = 256 * 1024;

// An OK packet that carries session-tracking data: the data is taken into
// `result`, and the OK re-encoded as the client expects it: with the part of
// the report its own session_track_* settings select (`tracking`, when it
// negotiated CLIENT_SESSION_TRACK), else without any. As on the server, the
// SESSION_STATE_CHANGED flag says whether entries follow. False when it does
// not decode.
bool takeSessionChanges(protocol::ByteView payload, uint32_t backend_capabilities, uint32_t client_capabilities,
                        const protocol::TrackingSettings* tracking, uint16_t extra_status, ForwardResult& result,
                        protocol::Bytes& reencoded) {
  auto ok = protocol::decodeOkPacket(payload, backend_capabilities);
  protocol::SessionChanges reported;
  if (!ok || !protocol::decodeSessionChanges(protocol::asBytes(ok->session_state_info), reported)) {
    return false;
  }
  ok->status_flags = (ok->status_flags & ~protocol::status::kSessionStateChanged) | extra_status;
  ok->session_state_info.clear();
  if (tracking != nullptr && (client_capabilities & protocol::cap::kSessionTrack)) {
    const protocol::SessionChanges told = protocol::trackedFor(reported, *tracking);
    if (protocol::anyTracked(told)) {
      protocol::Bytes info;
      protocol::encode(told, info);
      ok->session_state_info.assign(info.begin(), info.end());
      ok->status_flags |= protocol::status::kSessionStateChanged;
    }
  }
  auto& all = result.changes;
  all.variables.insert(all.variables.end(), reported.variables.begin(), reported.variables.end());
  if (reported.schema_changed) {
    all.schema_changed = true;
    all.schema = std::move(reported.schema);
  }
  all.state_changed = all.state_changed || reported.state_changed;
  if (!reported.transaction_state.empty()) all.transaction_state = std::move(reported.transaction_state);
  reencoded.clear();
  protocol::encode(*ok, client_capabilities, reencoded, payload[0]);
  return true;
}

// The packet ending an answer with `extra_status` added to its status
// flags: an OK (also the 0xfe OK ending rows under DEPRECATE_EOF) or a
// classic EOF. False when it does not decode (it is then forwarded as is).
bool withExtraStatus(protocol::ByteView payload, uint32_t backend_capabilities, uint32_t client_capabilities,
                     uint16_t extra_status, protocol::Bytes& reencoded) {
  reencoded.clear();
  if (protocol::isEofPacket(payload)) {
    auto eof = protocol::decodeEofPacket(payload);
    if (!eof) return false;
    eof->status_flags |= extra_status;
    protocol::encode(*eof, reencoded);
    return true;
  }
  auto ok = protocol::decodeOkPacket(payload, backend_capabilities);
  if (!ok) return false;
  ok->status_flags |= extra_status;
  protocol::encode(*ok, client_capabilities, reencoded, payload[0]);
  return true;
}

// The helpers below keep their locals out of forwardAnswer's coroutine frame:
// under Asio's recycling limit (1,020 bytes) a frame is reused per thread,
// above it every statement pays a large malloc and free (issue 34).

// The client's answer when the statement loaded the empty file the proxy sent
// instead of one the session may not send: the server's own refusal.
uint8_t appendInfileRefusal(ClientSink& client, protocol::Bytes& scratch, uint8_t seq, ForwardResult& result) {
  protocol::ErrPacket refused = client_error::make(
      client_error::kLocalInfileDisabled,
      "The used command is not allowed because the MariaDB server or client has disabled the local infile "
      "capability (shardproxy: users[].local_infile is off for this user, or the client did not offer "
      "CLIENT_LOCAL_FILES)");
  scratch.clear();
  protocol::encode(refused, scratch);
  seq = client.append(scratch, seq);
  result.server_error = true;
  result.error_code = refused.error_code;
  result.error = std::move(refused);
  return seq;
}

// Errors are rare: decoded for the session's diagnostics area (SHOW WARNINGS).
void takeServerError(protocol::ByteView payload, ForwardResult& result) {
  if (auto err = protocol::decodeErrPacket(payload)) {
    result.error_code = err->error_code;
    result.error = std::move(*err);
  }
}

// Classic EOF -> the OK packet with a 0xfe header that ends rows under DEPRECATE_EOF.
uint8_t appendRowsEndAsOk(ClientSink& client, const ShardChannel& shard, uint32_t client_capabilities,
                          uint16_t final_extra_status, protocol::Bytes& scratch, uint8_t seq) {
  protocol::OkPacket ok;
  // A classic EOF carries no session-state entries: the flag that would
  // announce them is not passed on.
  ok.status_flags = (shard.answer().statusFlags() & ~protocol::status::kSessionStateChanged) |
                    (shard.done() ? final_extra_status : 0);
  ok.warnings = shard.answer().warnings();
  scratch.clear();
  protocol::encode(ok, client_capabilities, scratch, protocol::kEofHeader);
  return client.append(scratch, seq);
}

enum class InfileStep { kGoOn, kStop };

// The server asks for the client's file (LOAD DATA LOCAL): what was forwarded
// so far goes first, then the file flows the other way. A coroutine of its
// own, so that only statements that load a file carry its state.
awaitable<InfileStep> answerFileRequest(ShardChannel& shard, ClientSink& client, protocol::ByteView payload,
                                        LocalInfileSource* infile, uint8_t& seq, ForwardResult& result) {
  if (client.pendingOutput() > 0 && !co_await client.flush()) {
    result.client_failed = true;
    co_return InfileStep::kStop;
  }
  const uint8_t shard_seq = static_cast<uint8_t>(shard.lastSequenceId() + 1);
  if (infile == nullptr || !infile->allowed()) {
    // Never a file the client did not agree to send: the server gets an
    // empty one (it loads nothing) and the client an error, not its OK.
    shard.writeFilePacket({}, shard_seq);
    if (!co_await shard.flush()) {
      result.backend_failed = true;
      co_return InfileStep::kStop;
    }
    result.infile_refused = true;
    co_return InfileStep::kGoOn;
  }
  InfileRelayed relayed = co_await infile->relay(payload, seq, shard, shard_seq);
  result.infile_bytes += relayed.bytes;
  seq = relayed.next_client_seq;
  if (relayed.client_failed) {
    result.client_failed = true;
    co_return InfileStep::kStop;
  }
  if (relayed.backend_failed) {
    result.backend_failed = true;
    co_return InfileStep::kStop;
  }
  // Over the limit: the server still waits for the rest of the file; cutting
  // the connection makes it roll the statement back.
  result.infile_over_limit = relayed.over_limit;
  co_return relayed.over_limit ? InfileStep::kStop : InfileStep::kGoOn;
}

}  // namespace

awaitable<ForwardResult> forwardAnswer(ShardChannel& shard, ClientSink& client, uint32_t client_capabilities,
                                       uint8_t first_client_seq, uint16_t final_extra_status,
                                       LocalInfileSource* infile) {
  using protocol::ResponseEvent;
  ForwardResult result;
  const uint32_t backend_capabilities = shard.capabilities();
  const bool translate_eof = (client_capabilities & protocol::cap::kDeprecateEof) &&
                             !(backend_capabilities & protocol::cap::kDeprecateEof);
  uint8_t seq = first_client_seq;
  protocol::Bytes scratch;
  while (!shard.done()) {
    if (!shard.hasBufferedPacket() && client.pendingOutput() > 0 && client.pendingOutput() < kFlushThreshold) {
      // Mid-response and the read buffer ran dry: the rest is often already
      // in the kernel. Take it now, so it leaves in the same send.
      while (!shard.hasBufferedPacket() && shard.tryFill()) {
      }
    }
    if (!shard.hasBufferedPacket() || client.pendingOutput() >= kFlushThreshold) {
      // About to wait for the backend (or holding a lot): let the client have what we have.
      if (client.pendingOutput() > 0) {
        const bool sent = co_await client.flush();
        result.client_failed = !sent;
      }
      if (result.client_failed) break;
    }
    auto packet = shard.tryNext();
    if (!packet) {
      auto waited = co_await shard.next();
      packet = std::move(waited);
    }
    if (!*packet) {
      result.backend_failed = true;
      result.timed_out = packet->error() == ChannelError::kTimeout;
      break;
    }
    const auto ev = (*packet)->event;
    const protocol::ByteView payload = (*packet)->payload;
    if (ev == ResponseEvent::kLocalInfile) {
      if (co_await answerFileRequest(shard, client, payload, infile, seq, result) == InfileStep::kStop) break;
      continue;
    }
    if (result.infile_refused && ev == ResponseEvent::kOk && shard.done()) {
      // The statement loaded an empty file: the client hears why, as the
      // server itself answers a client that does not send files.
      seq = appendInfileRefusal(client, scratch, seq, result);
      continue;
    }
    result.server_error = (ev == ResponseEvent::kErr);
    if (ev == ResponseEvent::kRow) ++result.rows;
    if (result.server_error) takeServerError(payload, result);
    if (ev == ResponseEvent::kOk && (shard.answer().statusFlags() & protocol::status::kSessionStateChanged) &&
        (backend_capabilities & protocol::cap::kSessionTrack)) {
      const uint16_t extra = shard.done() ? final_extra_status : 0;
      if (takeSessionChanges(payload, backend_capabilities, client_capabilities, client.tracking(), extra, result,
                             scratch)) {
        seq = client.append(scratch, seq);
        continue;
      }
      result.changes_unreadable = true;
    }
    if (translate_eof && (ev == ResponseEvent::kColumnsEof || ev == ResponseEvent::kParamsEof)) continue;
    if (translate_eof && ev == ResponseEvent::kRowsEnd) {
      seq = appendRowsEndAsOk(client, shard, client_capabilities, final_extra_status, scratch, seq);
      continue;
    }
    if (final_extra_status && shard.done() && (ev == ResponseEvent::kOk || ev == ResponseEvent::kRowsEnd) &&
        withExtraStatus(payload, backend_capabilities, client_capabilities, final_extra_status, scratch)) {
      seq = client.append(scratch, seq);
      continue;
    }
    seq = client.append(payload, seq);
  }
  result.status_flags = shard.answer().statusFlags();
  result.last_insert_id = shard.answer().lastInsertId();
  result.warnings = shard.answer().warnings();
  result.next_client_seq = seq;
  if (result.backend_failed || result.client_failed || result.infile_over_limit) {
    // A failed backend, or the rest of the response never read: not reusable.
    shard.markBroken();
  } else {
    shard.answered();
  }
  co_return result;
}

namespace {

awaitable<ForwardResult> flushAndForward(ShardChannel& shard, ClientSink& client, uint32_t client_capabilities,
                                         uint8_t first_client_seq, uint16_t final_extra_status,
                                         LocalInfileSource* infile) {
  const bool sent = co_await shard.flush();
  if (!sent) {
    ForwardResult failed;
    failed.backend_failed = true;
    failed.next_client_seq = first_client_seq;
    co_return failed;
  }
  co_return co_await forwardAnswer(shard, client, client_capabilities, first_client_seq, final_extra_status, infile);
}

}  // namespace

// Not coroutines: the command is queued at once, the returned awaitable sends it.
awaitable<ForwardResult> routeCommand(ShardChannel& shard, protocol::ByteView payload, protocol::ResponseKind kind,
                                      ClientSink& client, uint32_t client_capabilities, uint8_t first_client_seq,
                                      uint16_t final_extra_status, LocalInfileSource* infile) {
  shard.sendCommand(payload, kind);
  return flushAndForward(shard, client, client_capabilities, first_client_seq, final_extra_status, infile);
}

awaitable<ForwardResult> routeQuery(ShardChannel& shard, std::string_view sql, ClientSink& client,
                                    uint32_t client_capabilities, uint8_t first_client_seq,
                                    uint16_t final_extra_status, LocalInfileSource* infile) {
  shard.sendQuery(sql);
  return flushAndForward(shard, client, client_capabilities, first_client_seq, final_extra_status, infile);
}

}  // namespace sp::proxy
