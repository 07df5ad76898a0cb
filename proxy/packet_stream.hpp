// Buffered MySQL packet I/O over one TCP socket. Reads whole logical messages
// (joining 0xffffff-byte continuation packets), returning views into its own
// buffer to avoid copies; writes are framed into an output buffer and sent by
// flush(), so a forwarded result set goes out in large batches.
#pragma once
#include <cstdint>
#include <string>

#include "protocol/wire.hpp"
#include "proxy/net.hpp"

namespace sp::proxy {

enum class StreamError : uint8_t {
  kClosed,    // the peer closed the connection (EOF)
  kIo,        // socket error
  kTooLarge,  // a message exceeded the configured maximum
};

struct StreamMessage {
  protocol::ByteView payload;  // valid until the next read()
  uint8_t sequence_id = 0;     // of the message's last packet
  uint8_t first_sequence_id = 0;  // of its first packet (differs for messages of 16 MiB and more)
};

class PacketStream {
 public:
  PacketStream(tcp::socket socket, size_t max_message_bytes);

  // Reads the next logical message.
  awaitable<std::expected<StreamMessage, StreamError>> read();
  // True when a complete packet is already buffered (read() will not block).
  bool hasBufferedPacket() const;

  // Frames `payload` starting at `seq` into the output buffer; returns the next seq.
  uint8_t append(protocol::ByteView payload, uint8_t seq);
  // Appends bytes that are already framed (header + payload).
  void appendFramedBytes(protocol::ByteView framed) { out_.insert(out_.end(), framed.begin(), framed.end()); }
  // Sends everything appended so far.
  awaitable<bool> flush();
  size_t pendingOutput() const { return out_.size(); }

  tcp::socket& socket() { return socket_; }
  void close();
  bool isOpen() const { return socket_.is_open(); }
  // The last socket error, for logs.
  const error_code& lastError() const { return last_error_; }

 private:
  awaitable<bool> fill(size_t needed_total);
  awaitable<std::expected<StreamMessage, StreamError>> readJoined();
  void compact();

  tcp::socket socket_;
  size_t max_;
  protocol::Bytes in_;
  size_t begin_ = 0;
  size_t end_ = 0;
  protocol::Bytes joined_;
  protocol::Bytes out_;
  error_code last_error_;
  bool eof_ = false;
};

}  // namespace sp::proxy
