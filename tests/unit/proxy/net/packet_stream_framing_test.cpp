// PacketStream reads under protocol::MessageFraming (issue 15 part 3): the
// sequence ids inside a message of 16 MiB and more, the size limit, and the
// first/last sequence ids it reports, over a loopback socket pair with the
// peer writing raw bytes.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include <optional>
#include <string>

#include "protocol/packet.hpp"
#include "proxy/net/packet_stream.hpp"
#include "stream_pair.hpp"

namespace sp::proxy {
namespace {

struct ReadOutcome {
  std::optional<StreamError> error;
  size_t size = 0;
  uint8_t first_seq = 0;
  uint8_t last_seq = 0;
  uint8_t expected_seq = 0;
};

// The peer (client side of the pair) sends `raw` as is; the server reads one message.
ReadOutcome readOne(const protocol::Bytes& raw, size_t max_message_bytes) {
  Pair p(max_message_bytes);
  ReadOutcome out;
  p.run([&]() -> awaitable<void> {
    auto msg = co_await p.server->read();
    if (!msg) {
      out.error = msg.error();
      out.expected_seq = p.server->expectedSequenceId();
    } else {
      out.size = msg->payload.size();
      out.first_seq = msg->first_sequence_id;
      out.last_seq = msg->sequence_id;
    }
    p.server->close();
  });
  p.run([&]() -> awaitable<void> {
    p.client->appendFramedBytes(raw);
    co_await p.client->flush();
    p.client->close();  // the server sees the end when it waits for more
  });
  p.io.run();
  return out;
}

// A 0xffffff-byte packet with `first_seq`, then a 5-byte packet with `second_seq`.
protocol::Bytes twoPackets(uint8_t first_seq, uint8_t second_seq) {
  protocol::Bytes raw;
  protocol::Bytes big(protocol::kMaxPacketPayload, 'a');
  protocol::appendFramed(raw, big, first_seq);
  raw.resize(protocol::kHeaderSize + protocol::kMaxPacketPayload);  // drop the framer's empty final packet
  protocol::Bytes tail(5, 'b');
  protocol::appendFramed(raw, tail, second_seq);
  return raw;
}

TEST(PacketStreamFraming, JoinsAMessageWhoseSequenceIdsFollow) {
  auto out = readOne(twoPackets(255, 0), 64u << 20);
  ASSERT_FALSE(out.error);
  EXPECT_EQ(out.size, protocol::kMaxPacketPayload + 5);
  EXPECT_EQ(out.first_seq, 255);
  EXPECT_EQ(out.last_seq, 0);
}

TEST(PacketStreamFraming, AGapInsideAMessageIsOutOfOrder) {
  auto out = readOne(twoPackets(3, 5), 64u << 20);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(*out.error, StreamError::kOutOfOrder);
  EXPECT_EQ(out.expected_seq, 4);
}

TEST(PacketStreamFraming, AMessageOverTheLimitIsTooLargeFromItsHeader) {
  protocol::Bytes raw;
  protocol::appendFramed(raw, protocol::Bytes(100, 'x'), 0);
  raw.resize(protocol::kHeaderSize);  // only the header: refused before the body arrives
  auto out = readOne(raw, 99);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(*out.error, StreamError::kTooLarge);
  // The same size under the limit would wait for its body: here the peer is
  // gone, so the read reports the close.
  out = readOne(raw, 100);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(*out.error, StreamError::kClosed);
}

TEST(PacketStreamFraming, AContinuedMessageOverTheLimitIsTooLarge) {
  auto out = readOne(twoPackets(0, 1), protocol::kMaxPacketPayload + 4);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(*out.error, StreamError::kTooLarge);
}

// tryRead() and read() give the same messages: single packets are views with
// their sequence id; a continued message is left to read().
TEST(PacketStreamFraming, TryReadTakesBufferedSinglePackets) {
  Pair p;
  std::string got;
  p.run([&]() -> awaitable<void> {
    auto first = co_await p.server->read();
    if (!first) co_return;
    got = std::string(protocol::asText(first->payload)) + "/" + std::to_string(first->sequence_id);
    for (int i = 0; i < 100 && !p.server->hasBufferedPacket(); ++i) {
      p.server->tryFill();
      co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    }
    auto second = p.server->tryRead();
    if (second) got += " " + std::string(protocol::asText(second->payload)) + "/" + std::to_string(second->sequence_id);
    p.server->close();
  });
  p.run([&]() -> awaitable<void> {
    const std::string a = "one", b = "two";
    p.client->append(protocol::asBytes(a), 0);
    p.client->append(protocol::asBytes(b), 7);
    co_await p.client->flush();
  });
  p.io.run();
  EXPECT_EQ(got, "one/0 two/7");
}

}  // namespace
}  // namespace sp::proxy
