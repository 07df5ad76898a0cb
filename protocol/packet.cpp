#include "protocol/packet.hpp"

#include <algorithm>

namespace sp::protocol {

DecodeResult<PacketHeader> decodeHeader(ByteView four_bytes) {
  if (four_bytes.size() < kHeaderSize) return std::unexpected(DecodeError::kIncomplete);
  if (four_bytes.size() > kHeaderSize) return std::unexpected(DecodeError::kExtraBytes);
  Reader r(four_bytes);
  PacketHeader h{};
  h.payload_length = *r.u24();  // length checked above
  h.sequence_id = *r.u8();
  return h;
}

void encodeHeader(PacketHeader h, uint8_t* out4) {
  out4[0] = static_cast<uint8_t>(h.payload_length);
  out4[1] = static_cast<uint8_t>(h.payload_length >> 8);
  out4[2] = static_cast<uint8_t>(h.payload_length >> 16);
  out4[3] = h.sequence_id;
}

uint8_t appendFramed(Bytes& out, ByteView payload, uint8_t seq) {
  // Grow geometrically: an exact reserve per call reallocated and copied the
  // whole pending buffer on every packet (quadratic for a result streamed
  // row by row into one output buffer).
  size_t need = out.size() + payload.size() + kHeaderSize * (payload.size() / kMaxPacketPayload + 1);
  if (need > out.capacity()) out.reserve(std::max(need, out.capacity() * 2));
  size_t offset = 0;
  while (true) {
    size_t chunk = std::min<size_t>(payload.size() - offset, kMaxPacketPayload);
    uint8_t header[kHeaderSize];
    encodeHeader({static_cast<uint32_t>(chunk), seq}, header);
    out.insert(out.end(), header, header + kHeaderSize);
    out.insert(out.end(), payload.begin() + offset, payload.begin() + offset + chunk);
    offset += chunk;
    ++seq;  // uint8_t: wraps from 255 to 0 as the protocol requires
    // A full-size chunk means "more follows", so a payload that is an exact
    // multiple of 0xffffff needs a final empty packet.
    if (chunk < kMaxPacketPayload) return seq;
  }
}

uint8_t appendFramed(Bytes& out, ByteView head, ByteView rest, uint8_t seq) {
  const size_t length = head.size() + rest.size();
  if (length >= kMaxPacketPayload) {  // split into several packets: rare, join first
    Bytes joined(head.begin(), head.end());
    joined.insert(joined.end(), rest.begin(), rest.end());
    return appendFramed(out, joined, seq);
  }
  size_t need = out.size() + length + kHeaderSize;
  if (need > out.capacity()) out.reserve(std::max(need, out.capacity() * 2));
  uint8_t header[kHeaderSize];
  encodeHeader({static_cast<uint32_t>(length), seq}, header);
  out.insert(out.end(), header, header + kHeaderSize);
  out.insert(out.end(), head.begin(), head.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return static_cast<uint8_t>(seq + 1);
}

void MessageAssembler::feed(ByteView bytes) { buf_.insert(buf_.end(), bytes.begin(), bytes.end()); }

DecodeResult<std::optional<MessageAssembler::Message>> MessageAssembler::next() {
  // First pass: walk the packet headers of one logical message without copying,
  // so an oversized message is refused as soon as its headers are visible.
  // A fresh framing per call: an incomplete message is walked again later.
  MessageFraming framing(max_);
  size_t p = pos_;
  size_t packets = 0;
  while (true) {
    if (buf_.size() - p < kHeaderSize) return std::nullopt;
    auto packet = framing.onHeader(buf_.data() + p);
    if (!packet) return std::unexpected(packet.error());
    ++packets;
    if (buf_.size() - p - kHeaderSize < packet->payload_length) return std::nullopt;
    p += kHeaderSize + packet->payload_length;
    if (packet->last) break;
  }
  const size_t total = framing.messageBytes();
  const uint8_t first_seq = framing.firstSequenceId();
  const uint8_t last_seq = framing.lastSequenceId();

  // Second pass: join the chunks.
  Message m{Bytes{}, first_seq, last_seq};
  m.payload.reserve(total);
  size_t q = pos_;
  for (size_t i = 0; i < packets; ++i) {
    auto h = *decodeHeader(ByteView(buf_).subspan(q, kHeaderSize));
    auto begin = buf_.begin() + static_cast<std::ptrdiff_t>(q + kHeaderSize);
    m.payload.insert(m.payload.end(), begin, begin + h.payload_length);
    q += kHeaderSize + h.payload_length;
  }
  pos_ = p;

  // Drop consumed bytes when cheap (empty buffer) or when they dominate it.
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 65536 && pos_ > buf_.size() / 2) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
  }
  return m;
}

}  // namespace sp::protocol
