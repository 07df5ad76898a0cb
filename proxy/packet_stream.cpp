#include "proxy/packet_stream.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <optional>

#include "protocol/packet.hpp"

namespace sp::proxy {

namespace {
// Small enough that 10k idle sessions stay cheap; grows for big messages and
// shrinks back afterwards.
constexpr size_t kInitialBuffer = 4096;
constexpr size_t kShrinkAbove = 256 * 1024;

uint32_t payloadLength(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16);
}
}  // namespace

PacketStream::PacketStream(tcp::socket socket, size_t max_message_bytes)
    : socket_(std::move(socket)), max_(max_message_bytes) {
  error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
}

void PacketStream::close() {
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

bool PacketStream::hasBufferedPacket() const {
  size_t avail = end_ - begin_;
  if (avail < protocol::kHeaderSize) return false;
  return avail >= protocol::kHeaderSize + payloadLength(in_.data() + begin_);
}

void PacketStream::compact() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
    if (in_.size() > kShrinkAbove) {
      in_.resize(kInitialBuffer);
      in_.shrink_to_fit();
    }
    return;
  }
  if (begin_ > 0) {
    std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
}

// Ensures at least `needed_total` bytes are buffered from begin_.
awaitable<bool> PacketStream::fill(size_t needed_total) {
  if (end_ - begin_ >= needed_total) co_return true;
  compact();
  if (in_.size() < needed_total) in_.resize(std::max(needed_total, std::max(in_.size() * 2, kInitialBuffer)));
  while (end_ - begin_ < needed_total) {
    auto [ec, n] = co_await socket_.async_read_some(
        asio::buffer(in_.data() + end_, in_.size() - end_), kNoThrow);
    if (ec) {
      last_error_ = ec;
      eof_ = (ec == asio::error::eof);
      co_return false;
    }
    end_ += n;
  }
  co_return true;
}

awaitable<std::expected<StreamMessage, StreamError>> PacketStream::read() {
  auto fail = [this] { return std::unexpected(eof_ ? StreamError::kClosed : StreamError::kIo); };
  if (!co_await fill(protocol::kHeaderSize)) co_return fail();
  const uint8_t* h = in_.data() + begin_;
  uint32_t len = payloadLength(h);
  if (len == protocol::kMaxPacketPayload) co_return co_await readJoined();
  if (len > max_) co_return std::unexpected(StreamError::kTooLarge);
  if (!co_await fill(protocol::kHeaderSize + len)) co_return fail();
  h = in_.data() + begin_;  // fill() may have moved the buffer
  StreamMessage m{protocol::ByteView(h + protocol::kHeaderSize, len), h[3], h[3]};
  begin_ += protocol::kHeaderSize + len;
  co_return m;
}

// Slow path for messages of 16 MiB and more: collect the continuation packets.
awaitable<std::expected<StreamMessage, StreamError>> PacketStream::readJoined() {
  auto fail = [this] { return std::unexpected(eof_ ? StreamError::kClosed : StreamError::kIo); };
  joined_.clear();
  uint8_t seq = 0;
  std::optional<uint8_t> first_seq;
  for (;;) {
    if (!co_await fill(protocol::kHeaderSize)) co_return fail();
    uint32_t len = payloadLength(in_.data() + begin_);
    seq = in_[begin_ + 3];
    if (!first_seq) first_seq = seq;
    if (joined_.size() + len > max_) co_return std::unexpected(StreamError::kTooLarge);
    begin_ += protocol::kHeaderSize;
    // Copy what is buffered, then read the rest straight into joined_.
    size_t have = std::min<size_t>(len, end_ - begin_);
    joined_.insert(joined_.end(), in_.begin() + begin_, in_.begin() + begin_ + have);
    begin_ += have;
    if (have < len) {
      size_t old = joined_.size();
      joined_.resize(old + (len - have));
      auto [ec, n] = co_await asio::async_read(socket_, asio::buffer(joined_.data() + old, len - have), kNoThrow);
      if (ec) {
        last_error_ = ec;
        eof_ = (ec == asio::error::eof);
        co_return fail();
      }
    }
    if (len < protocol::kMaxPacketPayload) break;
  }
  co_return StreamMessage{protocol::ByteView(joined_.data(), joined_.size()), seq, *first_seq};
}

uint8_t PacketStream::append(protocol::ByteView payload, uint8_t seq) {
  return protocol::appendFramed(out_, payload, seq);
}

awaitable<bool> PacketStream::flush() {
  if (out_.empty()) co_return true;
  auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(out_), kNoThrow);
  out_.clear();
  if (out_.capacity() > kShrinkAbove) out_.shrink_to_fit();
  if (ec) {
    last_error_ = ec;
    co_return false;
  }
  co_return true;
}

}  // namespace sp::proxy
