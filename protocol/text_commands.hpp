// Text-protocol commands with an argument, as clients send them and as the
// proxy sends them to backends. Payloads include the command byte; decoders
// check it (kProtocolValue otherwise). Decoded strings view the payload.
//   COM_QUERY         0x03, query string<EOF>
//   COM_INIT_DB       0x02, schema name string<EOF>
//   COM_SET_OPTION    0x1b, int<2> option: 0 MULTI_STATEMENTS_ON, 1 OFF
//   COM_PROCESS_KILL  0x0c, int<4> connection id
#pragma once
#include <cstdint>
#include <string_view>

#include "protocol/constants.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

struct ComQuery {
  std::string_view query;  // string<EOF>
  bool operator==(const ComQuery&) const = default;
};
DecodeResult<ComQuery> decodeComQuery(ByteView payload);
void encode(const ComQuery& m, Bytes& out);

struct ComInitDb {
  std::string_view schema;  // string<EOF>
  bool operator==(const ComInitDb&) const = default;
};
DecodeResult<ComInitDb> decodeComInitDb(ByteView payload);
void encode(const ComInitDb& m, Bytes& out);

enum class SetOption : uint16_t { kMultiStatementsOn = 0, kMultiStatementsOff = 1 };
struct ComSetOption {
  SetOption option = SetOption::kMultiStatementsOn;  // int<2>; other values are kProtocolValue
  bool operator==(const ComSetOption&) const = default;
};
DecodeResult<ComSetOption> decodeComSetOption(ByteView payload);
void encode(const ComSetOption& m, Bytes& out);

// Lenient on purpose: the server reads the first four bytes and ignores any
// that follow, so trailing bytes are accepted (and dropped).
struct ComProcessKill {
  uint32_t connection_id = 0;  // int<4>
  bool operator==(const ComProcessKill&) const = default;
};
DecodeResult<ComProcessKill> decodeComProcessKill(ByteView payload);
void encode(const ComProcessKill& m, Bytes& out);

// A command as two parts, the command byte and its argument, for framing
// without copying the argument behind the byte first
// (appendFramed(out, parts.command, parts.argument, seq)).
struct CommandParts {
  ByteView command;   // one byte, static storage
  ByteView argument;  // views the caller's text
};
CommandParts commandParts(Command command, std::string_view argument);
inline CommandParts commandParts(const ComQuery& m) { return commandParts(Command::kQuery, m.query); }
inline CommandParts commandParts(const ComInitDb& m) { return commandParts(Command::kInitDb, m.schema); }

}  // namespace sp::protocol
