#include "protocol/generic_packets.hpp"

#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {
constexpr size_t kSqlStateLength = 5;
}  // namespace

// The codec speaks CLIENT_PROTOCOL_41 only (the proxy requires it at login), so
// status flags and warnings are always present.
void encode(const OkPacket& m, uint32_t capabilities, Bytes& out, uint8_t header) {
  Writer w(out);
  w.u8(header);
  w.lenenc(m.affected_rows);
  w.lenenc(m.last_insert_id);
  w.u16(m.status_flags);
  w.u16(m.warnings);
  bool track = (capabilities & cap::kSessionTrack) != 0;
  bool state_changed = track && (m.status_flags & status::kSessionStateChanged);
  // Like servers, omit an empty info unless session state follows it.
  if (!m.info.empty() || state_changed) w.lenencString(m.info);
  if (state_changed) w.lenencString(m.session_state_info);
}

// Servers (MySQL and MariaDB alike) write the info as a length-encoded string
// whether or not CLIENT_SESSION_TRACK is set, and omit it when it is empty.
DecodeResult<OkPacket> decodeOkPacket(ByteView payload, uint32_t capabilities) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kOkHeader && header != kEofHeader) return std::unexpected(DecodeError::kProtocolValue);
  OkPacket m;
  SP_TRY(affected, r.lenenc());
  m.affected_rows = affected;
  SP_TRY(insert_id, r.lenenc());
  m.last_insert_id = insert_id;
  SP_TRY(status_flags, r.u16());
  m.status_flags = status_flags;
  SP_TRY(warnings, r.u16());
  m.warnings = warnings;
  bool state_follows =
      (capabilities & cap::kSessionTrack) && (m.status_flags & status::kSessionStateChanged);
  if (r.empty() && !state_follows) return m;
  SP_TRY(info, r.lenencString());
  m.info = info;
  if (state_follows) {
    SP_TRY(state, r.lenencString());
    m.session_state_info = state;
    // MariaDB 10.11 builds the session state in a buffer of the current
    // database's character set: with a ucs2 (utf16, utf32) default database
    // the OK of USE carries bytes past the state's length. Clients
    // (libmariadb, Connector/J, PyMySQL) read the length and ignore the
    // rest; so does the proxy (it was a lost backend connection, 9002).
    return m;
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

void encode(const ErrPacket& m, Bytes& out) {
  Writer w(out);
  w.u8(kErrHeader);
  w.u16(m.error_code);
  if (!m.sql_state.empty()) {
    // The marker is followed by exactly five characters; pad or cut to fit.
    std::string state = m.sql_state.substr(0, kSqlStateLength);
    state.resize(kSqlStateLength, '0');
    w.u8('#');
    w.raw(state);
  }
  w.raw(m.message);
}

DecodeResult<ErrPacket> decodeErrPacket(ByteView payload) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kErrHeader) return std::unexpected(DecodeError::kProtocolValue);
  ErrPacket m;
  SP_TRY(code, r.u16());
  m.error_code = code;
  // Errors raised before the server knows the client speaks 4.1 (e.g. "too
  // many connections" at connect) have no '#' marker and no SQLSTATE.
  if (!r.empty() && r.rest()[0] == '#') {
    SP_TRY_VOID(r.skip(1));
    SP_TRY(state, r.fixed(kSqlStateLength));
    m.sql_state = state;
  }
  m.message = r.restString();
  return m;
}

void encode(const EofPacket& m, Bytes& out) {
  Writer w(out);
  w.u8(kEofHeader);
  w.u16(m.warnings);
  w.u16(m.status_flags);
}

DecodeResult<EofPacket> decodeEofPacket(ByteView payload) {
  Reader r(payload);
  SP_TRY(header, r.u8());
  if (header != kEofHeader) return std::unexpected(DecodeError::kProtocolValue);
  EofPacket m;
  SP_TRY(warnings, r.u16());
  m.warnings = warnings;
  SP_TRY(status_flags, r.u16());
  m.status_flags = status_flags;
  SP_TRY_VOID(r.expectEnd());
  return m;
}

}  // namespace sp::protocol
