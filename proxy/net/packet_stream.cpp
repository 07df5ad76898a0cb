#include "proxy/net/packet_stream.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <fmt/format.h>
#include <optional>

#include "protocol/packet.hpp"

namespace sp::proxy {

namespace {
// Buffers grow for big messages and shrink back to their read size afterwards.
constexpr size_t kShrinkAbove = 256 * 1024;
// Smallest step when a joined (16 MiB and more) message grows.
constexpr size_t kJoinChunk = 64 * 1024;

uint32_t payloadLength(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16);
}
}  // namespace

StreamError PacketStream::framingError(protocol::DecodeError e) {
  return e == protocol::DecodeError::kTooLarge ? StreamError::kTooLarge : StreamError::kOutOfOrder;
}

PacketStream::PacketStream(tcp::socket socket, size_t max_message_bytes, size_t read_buffer)
    : socket_(std::move(socket)), framing_(max_message_bytes), read_buffer_(std::max<size_t>(read_buffer, 1024)) {
  error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  // Synchronous read_some/write_some return would_block instead of blocking
  // the worker; Asio's asynchronous operations work the same either way.
  socket_.non_blocking(true, ec);
}

PacketStream::~PacketStream() = default;

tcp::socket& PacketStream::socket() { return tls_ ? tls_->next_layer() : socket_; }
const tcp::socket& PacketStream::socket() const { return tls_ ? tls_->next_layer() : socket_; }

void PacketStream::close() {
  // No TLS close_notify: the peer sees the TCP close, as from MariaDB.
  error_code ec;
  socket().shutdown(tcp::socket::shutdown_both, ec);
  socket().close(ec);
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
      in_.resize(read_buffer_);
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

// Makes room for `needed_total` bytes from begin_ (and at least a full read).
void PacketStream::reserveRead(size_t needed_total) {
  compact();
  if (in_.size() < needed_total || in_.size() < read_buffer_) {
    in_.resize(std::max(needed_total, std::max(in_.size() * 2, read_buffer_)));
  }
}

bool PacketStream::noteReadError(const error_code& ec) {
  last_error_ = ec;
  eof_ = (ec == asio::error::eof);
  return false;
}

bool PacketStream::tryFill() {
  // TLS: bytes on the socket may be an incomplete record; only the
  // asynchronous read can tell. Callers then just flush what they have.
  if (tls_ || eof_ || !socket_.is_open()) return false;
  // Read a whole packet's worth at least: a header alone would not help.
  reserveRead(end_ - begin_ + protocol::kHeaderSize + 1);
  if (end_ == in_.size()) return false;  // full buffer: the caller has packets to consume first
  error_code ec;
  size_t n = socket_.read_some(asio::buffer(in_.data() + end_, in_.size() - end_), ec);
  if (ec) {
    // would_block: nothing yet. Errors and EOF are left for the next read() to report.
    return false;
  }
  end_ += n;
  return n > 0;
}

// Grows a full buffer toward `needed_total` bytes (from begin_, which is 0
// after compact()), at most doubling it: a length announced in a header is
// never allocated (and zero-filled) before the bytes arrive.
void PacketStream::growReadBuffer(size_t needed_total) {
  const size_t target = std::min(needed_total, std::max(read_buffer_, in_.size() * 2));
  if (target > in_.size()) in_.resize(target);
}

// Ensures at least `needed_total` bytes are buffered from begin_.
awaitable<bool> PacketStream::fill(size_t needed_total) {
  if (end_ - begin_ >= needed_total) co_return true;
  compact();
  if (in_.size() < read_buffer_) in_.resize(read_buffer_);
  while (end_ - begin_ < needed_total) {
    if (end_ == in_.size()) growReadBuffer(needed_total);
    size_t room = in_.size() - end_;
    if (read_exactly_) room = std::min(room, needed_total - (end_ - begin_));
    auto buffer = asio::buffer(in_.data() + end_, room);
    error_code ec;
    size_t n = 0;
    // async_read_some first tries a non-blocking recv itself, then waits in epoll.
    if (tls_) {
      std::tie(ec, n) = co_await tls_->async_read_some(buffer, kNoThrow);
    } else {
      std::tie(ec, n) = co_await socket_.async_read_some(buffer, kNoThrow);
    }
    if (ec) co_return noteReadError(ec);
    end_ += n;
  }
  co_return true;
}

std::optional<StreamMessage> PacketStream::tryRead() {
  if (!hasBufferedPacket() || joined_.capacity() > kShrinkAbove) return std::nullopt;
  const uint8_t* h = in_.data() + begin_;
  // A continued (16 MiB and more) message and errors are read()'s; the
  // framing's first header of a message may be applied twice.
  if (payloadLength(h) == protocol::kMaxPacketPayload) return std::nullopt;
  auto packet = framing_.onHeader(h);
  if (!packet) return std::nullopt;
  StreamMessage m{protocol::ByteView(h + protocol::kHeaderSize, packet->payload_length), h[3], h[3]};
  begin_ += protocol::kHeaderSize + packet->payload_length;
  return m;
}

awaitable<std::expected<StreamMessage, StreamError>> PacketStream::read() {
  auto fail = [this] { return std::unexpected(eof_ ? StreamError::kClosed : StreamError::kIo); };
  read_started_at_ = std::chrono::steady_clock::now();
  if (joined_.capacity() > kShrinkAbove) {
    // The previous message (views into joined_) is gone: do not keep 16 MiB per session.
    joined_.clear();
    joined_.shrink_to_fit();
  }
  if (!co_await fill(protocol::kHeaderSize)) co_return fail();
  auto packet = framing_.onHeader(in_.data() + begin_);
  if (!packet) co_return std::unexpected(framingError(packet.error()));
  const uint32_t len = packet->payload_length;
  if (!packet->last) co_return co_await readJoined(len);
  if (!co_await fill(protocol::kHeaderSize + len)) co_return fail();
  const uint8_t* h = in_.data() + begin_;  // fill() may have moved the buffer
  StreamMessage m{protocol::ByteView(h + protocol::kHeaderSize, len), h[3], h[3]};
  begin_ += protocol::kHeaderSize + len;
  co_return m;
}

// Slow path for messages of 16 MiB and more: collect the continuation
// packets. The first packet's header is buffered and applied to framing_.
awaitable<std::expected<StreamMessage, StreamError>> PacketStream::readJoined(uint32_t first_length) {
  auto fail = [this] { return std::unexpected(eof_ ? StreamError::kClosed : StreamError::kIo); };
  joined_.clear();
  uint32_t len = first_length;
  for (;;) {
    begin_ += protocol::kHeaderSize;
    // Copy what is buffered, then read the rest straight into joined_.
    size_t have = std::min<size_t>(len, end_ - begin_);
    joined_.insert(joined_.end(), in_.begin() + begin_, in_.begin() + begin_ + have);
    begin_ += have;
    // The rest is read in steps no bigger than what has arrived so far, so
    // memory grows with the bytes received, not with the announced length.
    for (size_t remaining = len - have; remaining > 0;) {
      const size_t step = std::min(remaining, std::max(joined_.size(), kJoinChunk));
      const size_t old = joined_.size();
      joined_.resize(old + step);
      auto buffer = asio::buffer(joined_.data() + old, step);
      error_code ec;
      size_t n = 0;
      if (tls_) {
        std::tie(ec, n) = co_await asio::async_read(*tls_, buffer, kNoThrow);
      } else {
        std::tie(ec, n) = co_await asio::async_read(socket_, buffer, kNoThrow);
      }
      if (ec) {
        last_error_ = ec;
        eof_ = (ec == asio::error::eof);
        co_return fail();
      }
      remaining -= step;
    }
    if (!framing_.continuing()) break;
    if (!co_await fill(protocol::kHeaderSize)) co_return fail();
    auto packet = framing_.onHeader(in_.data() + begin_);
    if (!packet) co_return std::unexpected(framingError(packet.error()));
    len = packet->payload_length;
  }
  co_return StreamMessage{protocol::ByteView(joined_.data(), joined_.size()), framing_.lastSequenceId(),
                          framing_.firstSequenceId()};
}

uint8_t PacketStream::append(protocol::ByteView payload, uint8_t seq) {
  return protocol::appendFramed(out_, payload, seq);
}

awaitable<bool> PacketStream::flush() {
  if (out_.empty()) co_return true;
  if (tls_) co_return co_await flushTls();
  // Usually the kernel takes everything at once: send without suspending.
  // Only what it could not take (a full socket buffer) waits for epoll.
  error_code ec;
  size_t sent = socket_.write_some(asio::buffer(out_), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec = {};
    sent = 0;
  }
  if (!ec && sent < out_.size()) {
    auto rest = asio::buffer(out_.data() + sent, out_.size() - sent);
    write_waiting_since_ = std::chrono::steady_clock::now();
    auto [wec, n] = co_await asio::async_write(socket_, rest, kNoThrow);
    write_waiting_since_.reset();
    ec = wec;
  }
  co_return flushed(ec);
}

awaitable<bool> PacketStream::flushTls() {
  write_waiting_since_ = std::chrono::steady_clock::now();
  auto [ec, n] = co_await asio::async_write(*tls_, asio::buffer(out_), kNoThrow);
  write_waiting_since_.reset();
  co_return flushed(ec);
}

bool PacketStream::flushed(const error_code& ec) {
  out_.clear();
  if (out_.capacity() > kShrinkAbove) out_.shrink_to_fit();
  if (ec) last_error_ = ec;
  return !ec;
}

bool PacketStream::startTlsStream(std::shared_ptr<asio::ssl::context> context, TlsRole role,
                                  std::string_view verify_host) {
  if (tls_ || begin_ != end_) return false;
  tls_context_ = std::move(context);
  tls_ = std::make_unique<TlsStream>(std::move(socket_), *tls_context_);
  if (role == TlsRole::kClient && !verify_host.empty()) {
    const std::string host(verify_host);
    // OpenSSL's own check (a DNS name or an IP address against the
    // subjectAltName), so a mismatch has its own verify result to report.
    SSL_set1_host(tls_->native_handle(), host.c_str());
    error_code ec;
    asio::ip::make_address(host, ec);
    // SNI carries host names only, never addresses (RFC 6066).
    if (ec) SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
  }
  return true;
}

std::string PacketStream::tlsFailure(const error_code& ec) const {
  if (tls_) {
    const long verify = SSL_get_verify_result(tls_->native_handle());
    if (verify != X509_V_OK) return fmt::format("certificate verification failed: {}", X509_verify_cert_error_string(verify));
  }
  if (ec == asio::error::eof) return "the peer closed the connection during the TLS handshake";
  return fmt::format("TLS handshake failed: {}", ec.message());
}

awaitable<std::expected<void, std::string>> PacketStream::startTls(std::shared_ptr<asio::ssl::context> context,
                                                                   TlsRole role, std::string_view verify_host) {
  if (!startTlsStream(std::move(context), role, verify_host)) {
    co_return std::unexpected(std::string(tls_ ? "TLS already started" : "bytes after the SSL request"));
  }
  const auto type = role == TlsRole::kServer ? asio::ssl::stream_base::server : asio::ssl::stream_base::client;
  auto [ec] = co_await tls_->async_handshake(type, kNoThrow);
  if (ec) {
    last_error_ = ec;
    co_return std::unexpected(tlsFailure(ec));
  }
  co_return std::expected<void, std::string>{};
}

ssl_st* PacketStream::tlsSession() const {
  return tls_ ? const_cast<TlsStream&>(*tls_).native_handle() : nullptr;
}

std::string PacketStream::tlsDescription() const {
  if (!tls_) return {};
  SSL* ssl = const_cast<TlsStream&>(*tls_).native_handle();
  return fmt::format("{} {}", SSL_get_version(ssl), SSL_get_cipher_name(ssl));
}

}  // namespace sp::proxy
