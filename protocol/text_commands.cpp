#include "protocol/text_commands.hpp"

#include <array>

#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {

// Every command byte, so a CommandParts can view one without an allocation.
constexpr std::array<uint8_t, 256> kCommandBytes = [] {
  std::array<uint8_t, 256> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  return bytes;
}();

// The command byte, then `reader` positioned after it.
DecodeResult<void> expectCommand(Reader& reader, Command command) {
  SP_TRY(byte, reader.u8());
  if (byte != static_cast<uint8_t>(command)) return std::unexpected(DecodeError::kProtocolValue);
  return {};
}

void encodeWithText(Command command, std::string_view text, Bytes& out) {
  Writer w(out);
  w.u8(static_cast<uint8_t>(command));
  w.raw(text);
}

}  // namespace

DecodeResult<ComQuery> decodeComQuery(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(expectCommand(r, Command::kQuery));
  return ComQuery{r.restString()};
}

void encode(const ComQuery& m, Bytes& out) { encodeWithText(Command::kQuery, m.query, out); }

DecodeResult<ComInitDb> decodeComInitDb(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(expectCommand(r, Command::kInitDb));
  return ComInitDb{r.restString()};
}

void encode(const ComInitDb& m, Bytes& out) { encodeWithText(Command::kInitDb, m.schema, out); }

DecodeResult<ComSetOption> decodeComSetOption(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(expectCommand(r, Command::kSetOption));
  SP_TRY(option, r.u16());
  if (option > static_cast<uint16_t>(SetOption::kMultiStatementsOff)) {
    return std::unexpected(DecodeError::kProtocolValue);
  }
  SP_TRY_VOID(r.expectEnd());
  return ComSetOption{static_cast<SetOption>(option)};
}

void encode(const ComSetOption& m, Bytes& out) {
  Writer w(out);
  w.u8(static_cast<uint8_t>(Command::kSetOption));
  w.u16(static_cast<uint16_t>(m.option));
}

DecodeResult<ComProcessKill> decodeComProcessKill(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(expectCommand(r, Command::kProcessKill));
  SP_TRY(id, r.u32());
  return ComProcessKill{id};
}

void encode(const ComProcessKill& m, Bytes& out) {
  Writer w(out);
  w.u8(static_cast<uint8_t>(Command::kProcessKill));
  w.u32(m.connection_id);
}

CommandParts commandParts(Command command, std::string_view argument) {
  return {ByteView(&kCommandBytes[static_cast<uint8_t>(command)], 1), asBytes(argument)};
}

}  // namespace sp::protocol
