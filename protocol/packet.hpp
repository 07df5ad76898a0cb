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

// The rules that make packets one logical message, applied one packet header
// at a time: a packet of exactly 0xffffff payload bytes says another packet
// of the same message follows; each packet after the first carries the
// previous one's sequence id plus one (wrapping), else kProtocolValue (the
// server's ER_NET_PACKETS_OUT_OF_ORDER); the payloads of one message add up to
// at most the limit, else kTooLarge, known from the headers before any body
// byte is buffered. The one framing implementation: MessageAssembler (tests,
// fuzzing) and the proxy's socket reader (proxy/packet_stream) both apply it.
// After an error the connection is unusable; the framing must not be fed again.
class MessageFraming {
 public:
  explicit MessageFraming(size_t max_message_bytes) : max_(max_message_bytes) {}

  struct Packet {
    uint32_t payload_length;
    bool last;  // the message ends with this packet
  };
  // `header` points at 4 bytes: the next packet's header. A header after the
  // last packet of a message starts the next message.
  DecodeResult<Packet> onHeader(const uint8_t* header) {
    const uint32_t length = uint32_t(header[0]) | (uint32_t(header[1]) << 8) | (uint32_t(header[2]) << 16);
    const uint8_t seq = header[3];
    if (!continuing_) {
      first_seq_ = seq;
      total_ = 0;
    } else if (seq != static_cast<uint8_t>(last_seq_ + 1)) {
      return std::unexpected(DecodeError::kProtocolValue);
    }
    last_seq_ = seq;
    total_ += length;
    if (total_ > max_) return std::unexpected(DecodeError::kTooLarge);
    continuing_ = length == kMaxPacketPayload;
    return Packet{length, !continuing_};
  }

  // Of the message being read (or just read).
  uint8_t firstSequenceId() const { return first_seq_; }
  uint8_t lastSequenceId() const { return last_seq_; }
  size_t messageBytes() const { return total_; }
  // Between two packets of one message.
  bool continuing() const { return continuing_; }

  size_t maxMessageBytes() const { return max_; }
  void setMaxMessageBytes(size_t max_message_bytes) { max_ = max_message_bytes; }

 private:
  size_t max_;
  size_t total_ = 0;
  uint8_t first_seq_ = 0;
  uint8_t last_seq_ = 0;
  bool continuing_ = false;
};

// Incremental de-framer over MessageFraming: feed bytes as they arrive; take
// complete logical messages (payloads joined across 0xffffff splits).
// Tolerates any split of the input. A message longer than max_message_bytes
// is kTooLarge; a sequence gap inside a message is kProtocolValue.
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
