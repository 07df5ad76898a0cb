// Packet framing and the incremental de-framer.
#include "protocol/packet.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::ExactBuffer;
using test::hex;

struct HeaderCase {
  const char* name;
  PacketHeader header;
  const char* bytes;
};

const HeaderCase kHeaderCases[] = {
    {"empty_seq0", {0, 0}, "000000 00"},
    {"one_byte_seq1", {1, 1}, "010000 01"},
    {"mixed", {0x123456, 7}, "563412 07"},
    {"max_len_seq255", {0xffffff, 255}, "ffffff ff"},
};

TEST(PacketHeader, Encode) {
  for (const auto& c : kHeaderCases) {
    SCOPED_TRACE(c.name);
    uint8_t out[4] = {};
    encodeHeader(c.header, out);
    EXPECT_EQ(Bytes(out, out + 4), hex(c.bytes));
  }
}

TEST(PacketHeader, Decode) {
  for (const auto& c : kHeaderCases) {
    SCOPED_TRACE(c.name);
    Bytes in = hex(c.bytes);
    auto h = decodeHeader(ExactBuffer(in).view());
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(*h, c.header);
  }
}

TEST(PacketHeader, WrongSizes) {
  Bytes in = hex("0100000100");
  for (size_t n = 0; n < 4; ++n) {
    auto h = decodeHeader(ExactBuffer(in, n).view());
    ASSERT_FALSE(h.has_value());
    EXPECT_EQ(h.error(), DecodeError::kIncomplete);
  }
  EXPECT_EQ(decodeHeader(in).error(), DecodeError::kExtraBytes);
}

Bytes pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 7 + i / 251);
  return b;
}

TEST(AppendFramed, SmallPayloads) {
  Bytes out;
  EXPECT_EQ(appendFramed(out, Bytes{}, 0), 1);
  EXPECT_EQ(out, hex("00000000"));
  out.clear();
  EXPECT_EQ(appendFramed(out, hex("616263"), 3), 4);
  EXPECT_EQ(out, hex("03000003 616263"));
}

TEST(AppendFramed, SequenceWrapsAt255) {
  Bytes out = hex("aa");  // appends, keeps what was there
  EXPECT_EQ(appendFramed(out, hex("01"), 255), 0);
  EXPECT_EQ(out, hex("aa 010000ff 01"));
}

TEST(AppendFramed, ExactMultipleOfMaxEndsWithEmptyPacket) {
  Bytes payload = pattern(kMaxPacketPayload);
  Bytes out;
  EXPECT_EQ(appendFramed(out, payload, 254), 0);
  ASSERT_EQ(out.size(), kMaxPacketPayload + 8);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 4), hex("fffffffe"));
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), out.begin() + 4));
  EXPECT_EQ(Bytes(out.end() - 4, out.end()), hex("000000ff"));
}

TEST(AppendFramed, LargerThanMaxSplits) {
  Bytes payload = pattern(2 * kMaxPacketPayload + 5);
  Bytes out;
  EXPECT_EQ(appendFramed(out, payload, 255), 2);
  ASSERT_EQ(out.size(), payload.size() + 12);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 4), hex("ffffffff"));
  size_t second = 4 + kMaxPacketPayload;
  EXPECT_EQ(Bytes(out.begin() + second, out.begin() + second + 4), hex("ffffff00"));
  size_t third = second + 4 + kMaxPacketPayload;
  EXPECT_EQ(Bytes(out.begin() + third, out.begin() + third + 4), hex("05000001"));
  EXPECT_TRUE(std::equal(payload.end() - 5, payload.end(), out.end() - 5));
}

using Message = MessageAssembler::Message;

// Drains every complete message; fails the test on a decode error.
void drain(MessageAssembler& a, std::vector<Message>& out) {
  while (true) {
    auto m = a.next();
    ASSERT_TRUE(m.has_value()) << toString(m.error());
    if (!m->has_value()) return;
    out.push_back(std::move(**m));
  }
}

TEST(MessageAssembler, EverySplitPointOfSmallMessages) {
  Bytes wire = hex("03000000 616263  00000001  0a000005 30313233343536373839");
  std::vector<Message> expected = {
      {hex("616263"), 0, 0}, {Bytes{}, 1, 1}, {hex("30313233343536373839"), 5, 5}};
  for (size_t split = 0; split <= wire.size(); ++split) {
    SCOPED_TRACE(split);
    MessageAssembler a(1024);
    std::vector<Message> got;
    a.feed(ExactBuffer(wire, split).view());
    drain(a, got);
    a.feed(ByteView(wire).subspan(split));
    drain(a, got);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(a.buffered(), 0u);
  }
}

TEST(MessageAssembler, ByteByByte) {
  Bytes wire = hex("03000000 616263  00000001");
  MessageAssembler a(1024);
  std::vector<Message> got;
  for (size_t i = 0; i < wire.size(); ++i) {
    a.feed(ByteView(wire).subspan(i, 1));
    drain(a, got);
    EXPECT_EQ(got.size(), i < 6 ? 0u : (i < 10 ? 1u : 2u)) << i;
  }
  EXPECT_EQ(got.size(), 2u);
}

TEST(MessageAssembler, IncompleteReportsBuffered) {
  MessageAssembler a(1024);
  a.feed(hex("05000000 6162"));
  auto m = a.next();
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->has_value());
  EXPECT_EQ(a.buffered(), 6u);
}

// Splits chosen around the 0xffffff boundary: inside each header, at the
// first and last payload bytes of each chunk.
TEST(MessageAssembler, LargeMessageAtBoundarySplits) {
  Bytes payload = pattern(kMaxPacketPayload + 10);
  Bytes wire;
  appendFramed(wire, payload, 255);
  appendFramed(wire, hex("7a"), 1);
  const size_t second = 4 + kMaxPacketPayload;
  const std::vector<size_t> splits = {0, 1, 3, 4, 5, second - 1, second, second + 2, second + 4,
                                      second + 5, second + 13, second + 14, wire.size() - 1};
  for (size_t split : splits) {
    SCOPED_TRACE(split);
    MessageAssembler a(32u << 20);
    std::vector<Message> got;
    a.feed(ByteView(wire).first(split));
    drain(a, got);
    EXPECT_EQ(got.size(), split < second + 14 ? 0u : 1u);
    a.feed(ByteView(wire).subspan(split));
    drain(a, got);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].first_sequence_id, 255);
    EXPECT_EQ(got[0].last_sequence_id, 0);  // wrapped
    EXPECT_TRUE(got[0].payload == payload);
    EXPECT_EQ(got[1], (Message{hex("7a"), 1, 1}));
  }
}

TEST(MessageAssembler, LargeMessageInSmallPieces) {
  Bytes payload = pattern(2 * kMaxPacketPayload);  // three packets, the last empty
  Bytes wire;
  EXPECT_EQ(appendFramed(wire, payload, 0), 3);
  MessageAssembler a(2 * kMaxPacketPayload);
  std::vector<Message> got;
  for (size_t pos = 0; pos < wire.size(); pos += 65521) {
    a.feed(ByteView(wire).subspan(pos, std::min<size_t>(65521, wire.size() - pos)));
    drain(a, got);
    if (pos + 65521 < wire.size()) {
      ASSERT_TRUE(got.empty());
    }
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first_sequence_id, 0);
  EXPECT_EQ(got[0].last_sequence_id, 2);
  EXPECT_TRUE(got[0].payload == payload);
}

TEST(MessageAssembler, ExactMultipleWaitsForEmptyPacket) {
  Bytes payload = pattern(kMaxPacketPayload);
  Bytes wire;
  appendFramed(wire, payload, 9);
  MessageAssembler a(kMaxPacketPayload);
  a.feed(ByteView(wire).first(wire.size() - 4));
  auto m = a.next();
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->has_value());
  a.feed(ByteView(wire).last(4));
  m = a.next();
  ASSERT_TRUE(m.has_value() && m->has_value());
  EXPECT_EQ((*m)->first_sequence_id, 9);
  EXPECT_EQ((*m)->last_sequence_id, 10);
  EXPECT_EQ((*m)->payload.size(), kMaxPacketPayload);
}

TEST(MessageAssembler, MaxSizeIsInclusive) {
  MessageAssembler a(3);
  a.feed(hex("03000000 616263"));
  auto m = a.next();
  ASSERT_TRUE(m.has_value() && m->has_value());
  EXPECT_EQ((*m)->payload, hex("616263"));
}

TEST(MessageAssembler, TooLargeRefusedFromHeaderAlone) {
  MessageAssembler a(3);
  a.feed(hex("04000000"));
  auto m = a.next();
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error(), DecodeError::kTooLarge);
}

TEST(MessageAssembler, TooLargeAcrossChunks) {
  MessageAssembler a(kMaxPacketPayload + 1);
  Bytes wire;
  appendFramed(wire, pattern(kMaxPacketPayload + 2), 0);
  // Only the first chunk and the second header: the sum is already too big.
  a.feed(ByteView(wire).first(4 + kMaxPacketPayload + 4));
  auto m = a.next();
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error(), DecodeError::kTooLarge);
}

TEST(MessageAssembler, SequenceGapInsideMessage) {
  Bytes wire;
  appendFramed(wire, pattern(kMaxPacketPayload), 0);
  wire.back() = 2;  // the trailing empty packet should be seq 1
  MessageAssembler a(32u << 20);
  a.feed(wire);
  auto m = a.next();
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error(), DecodeError::kProtocolValue);
}

TEST(MessageAssembler, ManyMessagesInOddPieces) {
  Bytes wire;
  uint8_t seq = 0;
  for (int i = 0; i < 600; ++i) seq = appendFramed(wire, pattern(static_cast<size_t>(i % 37)), seq);
  MessageAssembler a(1024);
  std::vector<Message> got;
  for (size_t pos = 0; pos < wire.size(); pos += 7) {
    a.feed(ByteView(wire).subspan(pos, std::min<size_t>(7, wire.size() - pos)));
    drain(a, got);
  }
  ASSERT_EQ(got.size(), 600u);
  for (int i = 0; i < 600; ++i) {
    EXPECT_EQ(got[i].payload, pattern(static_cast<size_t>(i % 37)));
    EXPECT_EQ(got[i].first_sequence_id, static_cast<uint8_t>(i));  // wraps past 255
  }
  EXPECT_EQ(a.buffered(), 0u);
}

// MessageFraming, header by header: the rules both the assembler and the
// proxy's socket reader apply.
TEST(MessageFraming, HeaderByHeader) {
  MessageFraming f(2u * kMaxPacketPayload);
  const uint8_t full_seq9[] = {0xff, 0xff, 0xff, 9};
  const uint8_t three_seq10[] = {3, 0, 0, 10};
  auto p = f.onHeader(full_seq9);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->payload_length, kMaxPacketPayload);
  EXPECT_FALSE(p->last);
  EXPECT_TRUE(f.continuing());
  p = f.onHeader(three_seq10);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->last);
  EXPECT_EQ(f.firstSequenceId(), 9);
  EXPECT_EQ(f.lastSequenceId(), 10);
  EXPECT_EQ(f.messageBytes(), kMaxPacketPayload + 3u);
  // A new message may start with any id: the command/response turn is the caller's.
  const uint8_t one_seq0[] = {1, 0, 0, 0};
  p = f.onHeader(one_seq0);
  ASSERT_TRUE(p);
  EXPECT_EQ(f.firstSequenceId(), 0);
  EXPECT_EQ(f.messageBytes(), 1u);
}

TEST(MessageFraming, GapWrapAndLimit) {
  const uint8_t full_seq255[] = {0xff, 0xff, 0xff, 255};
  const uint8_t empty_seq0[] = {0, 0, 0, 0};
  const uint8_t empty_seq1[] = {0, 0, 0, 1};
  MessageFraming wraps(kMaxPacketPayload);
  ASSERT_TRUE(wraps.onHeader(full_seq255));
  EXPECT_TRUE(wraps.onHeader(empty_seq0));  // 255 then 0
  MessageFraming gap(kMaxPacketPayload);
  ASSERT_TRUE(gap.onHeader(full_seq255));
  auto p = gap.onHeader(empty_seq1);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), DecodeError::kProtocolValue);
  MessageFraming small(kMaxPacketPayload - 1);
  p = small.onHeader(full_seq255);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error(), DecodeError::kTooLarge);
  // The first header of a message may be applied again (a reader that peeked).
  MessageFraming again(10);
  const uint8_t five_seq4[] = {5, 0, 0, 4};
  ASSERT_TRUE(again.onHeader(five_seq4));
  ASSERT_TRUE(again.onHeader(five_seq4));
  EXPECT_EQ(again.messageBytes(), 5u);
}

}  // namespace
}  // namespace sp::protocol
