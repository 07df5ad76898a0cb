// Helpers for the login state-machine tests: framed peer messages, the
// packets a machine queued, and a byte-stream replay through MessageAssembler
// (so a script can be cut at every byte).
#pragma once
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"

namespace sp::protocol::test {

struct Framed {
  Bytes payload;
  uint8_t seq;
};

// The packets in `out` (one logical message each: login packets are small).
inline std::vector<Framed> packetsIn(const Bytes& out) {
  std::vector<Framed> packets;
  MessageAssembler a(1u << 20);
  a.feed(out);
  for (;;) {
    auto m = a.next();
    EXPECT_TRUE(m.has_value()) << "the machine queued malformed framing";
    if (!m || !*m) break;
    packets.push_back({std::move((*m)->payload), (*m)->first_sequence_id});
  }
  EXPECT_EQ(a.buffered(), 0u);
  return packets;
}

// The single ERR packet queued in `out` (code and id), or nullopt.
struct QueuedErr {
  uint16_t code;
  uint8_t seq;
  std::string message;
};
inline std::optional<QueuedErr> errIn(const Bytes& out) {
  auto packets = packetsIn(out);
  if (packets.size() != 1 || !isErrPacket(packets[0].payload)) return std::nullopt;
  auto err = decodeErrPacket(packets[0].payload);
  if (!err) return std::nullopt;
  return QueuedErr{err->error_code, packets[0].seq, err->message};
}

inline Bytes frame(ByteView payload, uint8_t seq) {
  Bytes out;
  appendFramed(out, payload, seq);
  return out;
}

}  // namespace sp::protocol::test
