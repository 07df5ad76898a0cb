// libFuzzer target: packet framing (protocol/packet.hpp).
// Input: int<1> limit selector, int<1> split seed, then a byte stream as a
// peer would send it. Invariants:
//  - MessageAssembler gives the same messages and the same error whether the
//    stream arrives at once or in pieces (any split of the input);
//  - every message it gives re-frames with appendFramed() into packets that
//    assemble back to the same payload and sequence ids;
//  - decodeHeader/encodeHeader round-trip.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "protocol/packet.hpp"

namespace {

using sp::protocol::ByteView;
using sp::protocol::Bytes;
using sp::protocol::DecodeError;
using sp::protocol::MessageAssembler;

void fail(const char* what) {
  std::fprintf(stderr, "packet invariant broken: %s\n", what);
  std::abort();
}

struct Outcome {
  std::vector<MessageAssembler::Message> messages;
  std::optional<DecodeError> error;
};

// Takes every complete message now available; stops at the first error.
bool drain(MessageAssembler& a, Outcome& out) {
  for (;;) {
    auto m = a.next();
    if (!m) {
      out.error = m.error();
      return false;
    }
    if (!*m) return true;
    out.messages.push_back(std::move(**m));
  }
}

Outcome assemble(ByteView stream, size_t limit, uint8_t split_seed) {
  MessageAssembler a(limit);
  Outcome out;
  size_t pos = 0;
  uint32_t state = split_seed | 1u;
  while (pos < stream.size()) {
    size_t chunk = stream.size() - pos;
    if (split_seed != 0) {
      state = state * 1103515245u + 12345u;  // piece sizes 1..8 from the seed
      chunk = std::min<size_t>(chunk, 1 + (state >> 16) % 8);
    }
    a.feed(stream.subspan(pos, chunk));
    pos += chunk;
    if (!drain(a, out)) return out;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  constexpr size_t kLimits[] = {0, 1, 16, 255, 4096, 1 << 20};
  size_t limit = kLimits[data[0] % std::size(kLimits)];
  ByteView stream(data + 2, size - 2);

  Outcome whole = assemble(stream, limit, 0);
  Outcome pieces = assemble(stream, limit, data[1]);
  if (whole.messages != pieces.messages) fail("messages depend on how the stream was split");
  if (whole.error != pieces.error) fail("error depends on how the stream was split");

  for (const auto& m : whole.messages) {
    if (m.payload.size() > limit) fail("message over the limit");
    Bytes framed;
    uint8_t next_seq = sp::protocol::appendFramed(framed, m.payload, m.first_sequence_id);
    if (next_seq != static_cast<uint8_t>(m.last_sequence_id + 1)) fail("appendFramed sequence");
    MessageAssembler again(limit);
    again.feed(framed);
    auto back = again.next();
    if (!back || !*back || !(**back == m) || again.buffered() != 0) fail("re-framed message differs");
  }

  if (stream.size() >= sp::protocol::kHeaderSize) {
    auto h = sp::protocol::decodeHeader(stream.first(sp::protocol::kHeaderSize));
    if (!h) fail("decodeHeader of 4 bytes");
    uint8_t out4[sp::protocol::kHeaderSize];
    sp::protocol::encodeHeader(*h, out4);
    if (!std::equal(out4, out4 + 4, stream.begin())) fail("header round trip");
  }
  return 0;
}
