// Buffered MySQL packet I/O over one TCP socket. Reads whole logical messages
// (joining 0xffffff-byte continuation packets) under protocol::MessageFraming
// (size limit, sequence ids within a message), returning views into its own
// buffer to avoid copies; writes are framed into an output buffer and sent by
// flush(), so a forwarded result set goes out in large batches.
//
// Per-query cost (docs/benchmarks.md, "Per-query cost"): the socket is in
// non-blocking mode and flush() / tryFill() call send/recv directly, so the
// common case (the kernel takes the whole write, or the rest of a response is
// already buffered) completes without suspending the coroutine. An Asio
// operation that completes at once still posts its completion through the
// io_context, which costs an extra epoll_wait(0) and a trip through the queue.
//
// TLS: startTls() moves the socket into an OpenSSL stream (Asio ssl::stream)
// after the plaintext SSLRequest. From then on reads and writes go through it
// with Asio's asynchronous operations only (OpenSSL may need to read to write
// and vice versa, which the synchronous shortcuts above cannot do on a
// non-blocking socket). A plaintext stream pays one predictable branch per
// read and flush (docs/benchmarks.md, "TLS").
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "protocol/packet.hpp"
#include "protocol/wire.hpp"
#include "proxy/net/net.hpp"

struct ssl_st;  // OpenSSL's SSL

namespace boost::asio::ssl {
class context;
template <typename Stream>
class stream;
}  // namespace boost::asio::ssl

namespace sp::proxy {

enum class TlsRole : uint8_t { kServer, kClient };

enum class StreamError : uint8_t {
  kClosed,    // the peer closed the connection (EOF)
  kIo,        // socket error
  kTooLarge,  // a message exceeded the configured maximum
  kOutOfOrder,  // a packet of a message did not carry the next sequence id (MariaDB: 1156)
};

struct StreamMessage {
  protocol::ByteView payload;  // valid until the next read()
  uint8_t sequence_id = 0;     // of the message's last packet
  uint8_t first_sequence_id = 0;  // of its first packet (differs for messages of 16 MiB and more)
};

class PacketStream {
 public:
  // `read_buffer`: bytes read per recv (the buffer grows beyond it only for
  // a message that does not fit). Client streams stay small so that 10k idle
  // sessions are cheap; backend streams read a whole result set in few recvs.
  // Memory follows the bytes that actually arrive: a header announcing 16 MiB
  // makes the buffer grow (doubling) only as those bytes come in.
  PacketStream(tcp::socket socket, size_t max_message_bytes, size_t read_buffer = kClientReadBuffer);
  ~PacketStream();
  PacketStream(const PacketStream&) = delete;
  PacketStream& operator=(const PacketStream&) = delete;

  static constexpr size_t kClientReadBuffer = 4096;
  static constexpr size_t kBackendReadBuffer = 64 * 1024;

  // Reads the next logical message.
  awaitable<std::expected<StreamMessage, StreamError>> read();
  // The next message when a whole one (under 16 MiB) is already buffered,
  // without suspending (no coroutine frame); nullopt: call read(). Does not
  // restart readStartedAt() (which times clients waiting between commands).
  std::optional<StreamMessage> tryRead();
  // True when a complete packet is already buffered (read() will not block).
  bool hasBufferedPacket() const;
  // One non-blocking recv of whatever the kernel already holds, without
  // waiting; true when bytes arrived. For callers about to flush a partial
  // response: if the rest is already here, it goes out in the same send.
  bool tryFill();

  // Frames `payload` starting at `seq` into the output buffer; returns the next seq.
  uint8_t append(protocol::ByteView payload, uint8_t seq);
  // Frames the payload `head` + `rest` (a command byte and its argument) without joining them.
  uint8_t append(protocol::ByteView head, protocol::ByteView rest, uint8_t seq) {
    return protocol::appendFramed(out_, head, rest, seq);
  }
  // Appends bytes that are already framed (header + payload).
  void appendFramedBytes(protocol::ByteView framed) { out_.insert(out_.end(), framed.begin(), framed.end()); }
  // Sends everything appended so far.
  awaitable<bool> flush();
  size_t pendingOutput() const { return out_.size(); }

  // Client streams are capped low until the login completes (hostile peers
  // announce big packets and never send them); raised afterwards.
  void setMaxMessageBytes(size_t max_message_bytes) { framing_.setMaxMessageBytes(max_message_bytes); }
  size_t maxMessageBytes() const { return framing_.maxMessageBytes(); }
  // After kOutOfOrder: the sequence id the peer should have sent (MariaDB's
  // ERR for it carries this id).
  uint8_t expectedSequenceId() const { return static_cast<uint8_t>(framing_.lastSequenceId() + 1); }
  // When the last read() began: for a client stream read between commands,
  // the moment the session went idle (server.wait_timeout_s).
  std::chrono::steady_clock::time_point readStartedAt() const { return read_started_at_; }
  // Since when a flush has waited for the peer to take bytes (the kernel's
  // send buffer full); nullopt when no flush waits. For client streams:
  // server.net_write_timeout_s.
  std::optional<std::chrono::steady_clock::time_point> writeWaitingSince() const { return write_waiting_since_; }
  // Bytes held by the read buffers now (tests and stats).
  size_t bufferedCapacity() const { return in_.capacity() + joined_.capacity(); }

  // Reads no byte past the message asked for: set while the peer may start
  // TLS right after its SSLRequest (its ClientHello must reach OpenSSL, not
  // this buffer). Costs a recv per header and payload; only used before login.
  void setReadExactly(bool exact) { read_exactly_ = exact; }
  // Switches to TLS (nothing may be buffered). kClient with `verify_host`
  // non-empty also checks the peer's certificate names it (the context
  // decides whether the chain is verified). On failure, a message saying why
  // (the certificate check's own reason when that failed); the stream is then unusable.
  // (Arguments are lvalues at every call: GCC 12 destroys temporaries
  // passed to a coroutine twice.)
  awaitable<std::expected<void, std::string>> startTls(std::shared_ptr<asio::ssl::context> context, TlsRole role,
                                                       std::string_view verify_host);
  bool isTls() const { return tls_ != nullptr; }
  // "TLSv1.3 TLS_AES_256_GCM_SHA384"; empty for plaintext.
  std::string tlsDescription() const;
  // The OpenSSL session (peer certificate, verify result); null for plaintext.
  ssl_st* tlsSession() const;

  // The TCP socket (under the TLS layer, once there is one).
  tcp::socket& socket();
  const tcp::socket& socket() const;
  void close();
  bool isOpen() const { return socket().is_open(); }
  // The last socket error, for logs.
  const error_code& lastError() const { return last_error_; }

 private:
  awaitable<bool> fill(size_t needed_total);
  awaitable<bool> flushTls();
  bool flushed(const error_code& ec);  // after a send: empties the output, notes an error
  void reserveRead(size_t needed_total);
  void growReadBuffer(size_t needed_total);
  bool noteReadError(const error_code& ec);
  awaitable<std::expected<StreamMessage, StreamError>> readJoined(uint32_t first_length);
  static StreamError framingError(protocol::DecodeError e);
  void compact();

  using TlsStream = asio::ssl::stream<tcp::socket>;
  bool startTlsStream(std::shared_ptr<asio::ssl::context> context, TlsRole role, std::string_view verify_host);
  std::string tlsFailure(const error_code& ec) const;

  tcp::socket socket_;  // moved into tls_ by startTls()
  std::shared_ptr<asio::ssl::context> tls_context_;  // declared first: outlives tls_ (a reload replaces the server's)
  std::unique_ptr<TlsStream> tls_;
  bool read_exactly_ = false;
  protocol::MessageFraming framing_;  // the packet rules (protocol/packet.hpp): sizes and sequence ids
  size_t read_buffer_;
  protocol::Bytes in_;
  size_t begin_ = 0;
  size_t end_ = 0;
  protocol::Bytes joined_;
  protocol::Bytes out_;
  error_code last_error_;
  bool eof_ = false;
  std::chrono::steady_clock::time_point read_started_at_ = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> write_waiting_since_;
};

}  // namespace sp::proxy
