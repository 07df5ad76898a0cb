// libFuzzer target: prepared-statement commands and binary values
// (protocol/prepared.hpp, binary_row.hpp, binary_value.hpp, sql_literal.hpp).
// Input:
//   int<1> num_params (mod 24)
//   int<1> flags: bit 7 = the session already knows bound types,
//                 bits 0-6 = COM_STMT_SEND_LONG_DATA seen for params 0-6
//   num_params x (int<1> type, int<1> 0x80 if unsigned)   (as far as the input goes)
//   payload: a COM_STMT_* command, a COM_STMT_PREPARE_OK, or a binary row
// Invariants: no crash or sanitizer report; what the decoders accept
// re-encodes and decodes back to the same message; every decoded value can be
// described, rendered as text and as an SQL literal without a crash.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "protocol/binary_row.hpp"
#include "protocol/binary_value.hpp"
#include "protocol/constants.hpp"
#include "protocol/prepared.hpp"
#include "protocol/sql_literal.hpp"

namespace sp::protocol {
namespace {

void fail(const char* what) {
  std::fprintf(stderr, "prepared invariant broken: %s\n", what);
  std::abort();
}

template <class Message, class Decode>
void roundTrip(ByteView payload, Decode decode, const char* what) {
  auto m = decode(payload);
  if (!m) return;
  Bytes again;
  encode(*m, again);
  auto back = decode(ByteView(again));
  if (!back || !(*back == *m)) fail(what);
}

ColumnDefinition41 columnOf(BinaryType t, uint8_t decimals) {
  ColumnDefinition41 c;
  c.type = t.type;
  c.flags = t.is_unsigned ? column_flag::kUnsigned : 0;
  c.decimals = decimals;
  c.column_length = 20;
  return c;
}

// Everything the proxy does with one bound or returned value.
void exerciseValue(const BinaryValue& v, BinaryType t, uint8_t decimals) {
  if (std::holds_alternative<LongDataValue>(v)) return;
  (void)describeParam(v, t);
  (void)sqlLiteral(v, t, {});
  (void)sqlLiteral(v, t, {.backslash_escapes = false});
  ColumnDefinition41 column = columnOf(t, decimals);
  auto text = toText(v, column);
  if (text) (void)fromText(std::string_view(*text), column);
}

void fuzzExecute(ByteView payload, StmtParamState state, uint8_t decimals) {
  auto m = decodeStmtExecute(payload, state);
  if (!m) return;
  if (m->values.size() != state.num_params || m->types.size() != state.num_params) fail("execute count");
  for (size_t i = 0; i < m->values.size(); ++i) exerciseValue(m->values[i], m->types[i], decimals);

  // What the proxy sends a backend: the same execute, types always sent.
  StmtExecute sent = retarget(*m, 7);
  Bytes wire;
  if (!encode(sent, wire)) fail("decoded execute does not re-encode");
  StmtParamState fresh;
  fresh.num_params = state.num_params;
  fresh.long_data = state.long_data;
  auto back = decodeStmtExecute(wire, fresh);
  // Compared as bytes: a NaN value is not equal to itself.
  Bytes wire_again;
  if (!back || back->statement_id != 7 || !encode(*back, wire_again) || wire_again != wire) {
    fail("re-encoded execute differs");
  }

  rememberExecute(state, *m);
  if (state.bound_types != m->types || !state.long_data.empty()) fail("rememberExecute");
}

void fuzzRow(ByteView payload, const std::vector<BinaryType>& types, uint8_t decimals) {
  auto row = decodeBinaryRow(payload, types);
  if (!row) return;
  if (row->size() != types.size()) fail("row size");
  for (size_t i = 0; i < row->size(); ++i) exerciseValue((*row)[i], types[i], decimals);
  Bytes again;
  if (!encodeBinaryRow(*row, types, again)) fail("decoded row does not re-encode");
  auto back = decodeBinaryRow(again, types);
  Bytes again2;  // compared as bytes: a NaN value is not equal to itself
  if (!back || !encodeBinaryRow(*back, types, again2) || again2 != again) fail("re-encoded row differs");
}

}  // namespace
}  // namespace sp::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sp::protocol;
  if (size < 2) return 0;
  StmtParamState state;
  state.num_params = data[0] % 24;
  uint8_t flags = data[1];
  Reader r(ByteView(data + 2, size - 2));
  std::vector<BinaryType> types;
  for (size_t i = 0; i < state.num_params && r.remaining() >= 2; ++i) {
    BinaryType t;
    t.type = static_cast<ColumnType>(*r.u8());
    t.is_unsigned = (*r.u8() & 0x80) != 0;
    types.push_back(t);
  }
  if ((flags & 0x80) && types.size() == state.num_params) state.bound_types = types;
  for (uint16_t p = 0; p < 7; ++p) {
    if (flags & (1u << p)) state.noteLongData(p);
  }
  ByteView payload = r.rest();
  uint8_t decimals = static_cast<uint8_t>(flags % 8 == 7 ? 39 : flags % 8);

  roundTrip<StmtPrepare>(payload, [](ByteView b) { return decodeStmtPrepare(b); }, "prepare");
  roundTrip<StmtPrepareOk>(payload, [](ByteView b) { return decodeStmtPrepareOk(b); }, "prepare ok");
  roundTrip<StmtSendLongData>(payload, [](ByteView b) { return decodeStmtSendLongData(b); }, "long data");
  roundTrip<StmtClose>(payload, [](ByteView b) { return decodeStmtClose(b); }, "close");
  roundTrip<StmtReset>(payload, [](ByteView b) { return decodeStmtReset(b); }, "reset");
  roundTrip<StmtFetch>(payload, [](ByteView b) { return decodeStmtFetch(b); }, "fetch");
  fuzzExecute(payload, state, decimals);
  fuzzRow(payload, types, decimals);
  return 0;
}
