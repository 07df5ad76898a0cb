// Runs every protocol decoder (and the stateful tracker/assembler) on one
// input. Shared by the libFuzzer target and the gtest robustness test.
// Returns the number of decoders that accepted the input; on acceptance the
// canonical encoders are checked to be stable (decode(encode(x)) == x).
#pragma once
#include <cstddef>
#include <cstdint>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "protocol/packet.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/resultset.hpp"

namespace sp::protocol::fuzz {

// `fail(const char* what)` reports a broken invariant: the fuzzer aborts, the unit test fails.
template <class T, class Decode, class Encode, class Fail>
int checkStable(const DecodeResult<T>& first, Decode decode, Encode encode, Fail& fail, const char* what) {
  if (!first) return 0;
  Bytes again;
  encode(*first, again);
  auto second = decode(ByteView(again));
  if (!second || !(*second == *first)) fail(what);
  return 1;
}

template <class Fail>
int decodeAll(ByteView in, Fail fail) {
  int accepted = 0;
  constexpr uint32_t kCapSets[] = {0, cap::kSessionTrack, cap::kDeprecateEof | cap::kSessionTrack};
  for (uint32_t caps : kCapSets) {
    accepted += checkStable(
        decodeOkPacket(in, caps), [&](ByteView b) { return decodeOkPacket(b, caps); },
        [&](const OkPacket& m, Bytes& out) { encode(m, caps, out, in.empty() ? 0 : in[0]); }, fail, "ok");
  }
  accepted += checkStable(
      decodeErrPacket(in), [](ByteView b) { return decodeErrPacket(b); },
      [](const ErrPacket& m, Bytes& out) { encode(m, out); }, fail, "err");
  accepted += checkStable(
      decodeEofPacket(in), [](ByteView b) { return decodeEofPacket(b); },
      [](const EofPacket& m, Bytes& out) { encode(m, out); }, fail, "eof");
  for (uint32_t mcaps : {0u, mariadb_cap::kExtendedTypeInfo | mariadb_cap::kCacheMetadata}) {
    accepted += checkStable(
        decodeColumnDefinition41(in, mcaps), [&](ByteView b) { return decodeColumnDefinition41(b, mcaps); },
        [&](const ColumnDefinition41& m, Bytes& out) { encode(m, out, mcaps); }, fail, "column");
    accepted += checkStable(
        decodeColumnCount(in, mcaps), [&](ByteView b) { return decodeColumnCount(b, mcaps); },
        [&](const ColumnCount& m, Bytes& out) { encodeColumnCount(m, mcaps, out); }, fail, "count");
  }
  auto response = decodeHandshakeResponse41(in);
  if (response && !(response->capabilities & (1u << 26))) {  // the zstd byte is not re-encoded
    accepted += checkStable(
        response, [](ByteView b) { return decodeHandshakeResponse41(b); },
        [](const HandshakeResponse41& m, Bytes& out) { encode(m, out); }, fail, "response");
  }
  accepted += decodeHandshakeV10(in).has_value();
  accepted += decodeAuthSwitchRequest(in).has_value();
  accepted += decodeAuthMoreData(in).has_value();
  accepted += isSslRequest(in);
  for (size_t columns = 0; columns < 4; ++columns) accepted += decodeTextRow(in, columns).has_value();

  // The same bytes as a stream of framed packets.
  MessageAssembler assembler(1 << 16);
  assembler.feed(in);
  ResponseTracker trackers[] = {
      ResponseTracker(ResponseKind::kQuery, cap::kProtocol41),
      ResponseTracker(ResponseKind::kQuery, cap::kProtocol41 | cap::kDeprecateEof, mariadb_cap::kCacheMetadata),
      ResponseTracker(ResponseKind::kFieldList, cap::kProtocol41),
  };
  bool failed[3] = {false, false, false};
  for (int i = 0; i < 64; ++i) {
    auto m = assembler.next();
    if (!m || !m->has_value()) break;
    for (int t = 0; t < 3; ++t) {
      if (!failed[t]) failed[t] = !trackers[t].onPacket((*m)->payload).has_value();
    }
  }
  return accepted;
}

}  // namespace sp::protocol::fuzz
