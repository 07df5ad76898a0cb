// OK, ERR and EOF packets in both the classic (EOF) and CLIENT_DEPRECATE_EOF styles.
#pragma once
#include <cstdint>
#include <string>

#include "protocol/wire.hpp"

namespace sp::protocol {

struct OkPacket {
  uint64_t affected_rows = 0;     // int<lenenc>
  uint64_t last_insert_id = 0;    // int<lenenc>
  uint16_t status_flags = 0;      // int<2>
  uint16_t warnings = 0;          // int<2>
  std::string info;               // lenenc, omitted when empty (servers send it lenenc with or
                                  // without CLIENT_SESSION_TRACK, despite docs saying string<EOF>)
  std::string session_state_info; // lenenc, when CLIENT_SESSION_TRACK and SERVER_SESSION_STATE_CHANGED
  bool operator==(const OkPacket&) const = default;
};
// header 0x00 for a plain OK; 0xfe for the OK that ends a result set under DEPRECATE_EOF.
void encode(const OkPacket& m, uint32_t capabilities, Bytes& out, uint8_t header = 0x00);
// Accepts header 0x00 or 0xfe.
DecodeResult<OkPacket> decodeOkPacket(ByteView payload, uint32_t capabilities);

struct ErrPacket {
  uint16_t error_code = 0;   // int<2>
  std::string sql_state;     // '#' + string[5] when CLIENT_PROTOCOL_41
  std::string message;       // string<EOF>
  bool operator==(const ErrPacket&) const = default;
};
void encode(const ErrPacket& m, Bytes& out);
DecodeResult<ErrPacket> decodeErrPacket(ByteView payload);

struct EofPacket {
  uint16_t warnings = 0;      // int<2>
  uint16_t status_flags = 0;  // int<2>
  bool operator==(const EofPacket&) const = default;
};
void encode(const EofPacket& m, Bytes& out);
DecodeResult<EofPacket> decodeEofPacket(ByteView payload);

// A classic EOF packet: header 0xfe and payload shorter than 9 bytes
// (a longer 0xfe payload is a row or a DEPRECATE_EOF OK packet).
inline bool isEofPacket(ByteView p) { return !p.empty() && p[0] == 0xfe && p.size() < 9; }
inline bool isErrPacket(ByteView p) { return !p.empty() && p[0] == 0xff; }
inline bool isOkPacket(ByteView p) { return !p.empty() && p[0] == 0x00; }

}  // namespace sp::protocol
