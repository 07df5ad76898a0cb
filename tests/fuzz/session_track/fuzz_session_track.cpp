// libFuzzer target: the session-tracking decoder (protocol/session_track.hpp),
// on the input as an OK packet's session_state_info, and on OK packets
// carrying it (decodeOkPacket with CLIENT_SESSION_TRACK, then the decoder on
// what it extracted). Invariant: what is decoded re-encodes with encode() to
// entries that decode to the same changes.
#include <cstdio>
#include <cstdlib>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/session_track.hpp"

namespace {

using sp::protocol::ByteView;
using sp::protocol::Bytes;
using sp::protocol::SessionChanges;

void fail(const char* what) {
  std::fprintf(stderr, "session_track invariant broken: %s\n", what);
  std::abort();
}

void decodeAndCheck(ByteView state_info) {
  SessionChanges changes;
  if (!sp::protocol::decodeSessionChanges(state_info, changes)) return;
  Bytes again;
  sp::protocol::encode(changes, again);
  SessionChanges back;
  if (!sp::protocol::decodeSessionChanges(again, back)) fail("re-encoded changes do not decode");
  if (!(back == changes)) fail("re-encoded changes differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView in(data, size);
  decodeAndCheck(in);
  // The same bytes as a whole OK packet from a connection that negotiated session tracking.
  auto ok = sp::protocol::decodeOkPacket(in, sp::protocol::cap::kProtocol41 | sp::protocol::cap::kSessionTrack);
  if (ok) decodeAndCheck(sp::protocol::asBytes(ok->session_state_info));
  return 0;
}
