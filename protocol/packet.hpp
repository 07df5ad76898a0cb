// Packet framing: 3-byte little-endian payload length + 1-byte sequence id.
// A payload of 0xffffff bytes or more is split into 0xffffff-byte packets,
// the last one shorter (possibly empty); readers join them back.
#pragma once
#include <cstdint>
#include <optional>

#include "protocol/wire.hpp"

namespace sp::protocol {

inline constexpr size_t kHeaderSize = 4;
inline constexpr uint32_t kMaxPacketPayload = 0xffffff;

struct PacketHeader {
  uint32_t payload_length;  // int<3>
  uint8_t sequence_id;      // int<1>
  bool operator==(const PacketHeader&) const = default;
};

DecodeResult<PacketHeader> decodeHeader(ByteView four_bytes);
void encodeHeader(PacketHeader h, uint8_t* out4);

// Appends `payload` framed as one or more packets starting at `seq`.
// Returns the sequence id that the next packet should use.
uint8_t appendFramed(Bytes& out, ByteView payload, uint8_t seq);
// The same for the payload `head` followed by `rest` (a command byte and its
// argument: COM_QUERY and the SQL), without joining them first.
uint8_t appendFramed(Bytes& out, ByteView head, ByteView rest, uint8_t seq);

// Incremental de-framer: feed bytes as they arrive; take complete logical
// messages (payloads joined across 0xffffff splits). Tolerates any split of
// the input. A message longer than max_message_bytes is kTooLarge.
class MessageAssembler {
 public:
  explicit MessageAssembler(size_t max_message_bytes) : max_(max_message_bytes) {}

  void feed(ByteView bytes);
  // The next complete message, std::nullopt if more bytes are needed, or an error.
  // `first_sequence_id` receives the sequence id of the message's first packet;
  // `last_sequence_id` that of its last packet.
  struct Message {
    Bytes payload;
    uint8_t first_sequence_id;
    uint8_t last_sequence_id;
    bool operator==(const Message&) const = default;
  };
  DecodeResult<std::optional<Message>> next();
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  size_t max_;
  Bytes buf_;
  size_t pos_ = 0;
};

}  // namespace sp::protocol
