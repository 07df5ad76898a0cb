// Where an execution writes the packets the client gets: framed with
// sequence ids, buffered until flush(). The session's PacketStream in
// production (PacketStreamSink), a recorder in unit tests.
#pragma once
#include <cstddef>
#include <cstdint>

#include "protocol/wire.hpp"
#include "proxy/net/net.hpp"
#include "proxy/net/packet_stream.hpp"

namespace sp::proxy {

class ClientSink {
 public:
  virtual ~ClientSink() = default;
  // Frames `payload` starting at `seq`; returns the next sequence id.
  virtual uint8_t append(protocol::ByteView payload, uint8_t seq) = 0;
  // Bytes appended and not flushed yet.
  virtual size_t pendingOutput() const = 0;
  // Sends what was appended; false when the client is gone.
  virtual awaitable<bool> flush() = 0;
};

class PacketStreamSink final : public ClientSink {
 public:
  explicit PacketStreamSink(PacketStream& stream) : stream_(stream) {}
  uint8_t append(protocol::ByteView payload, uint8_t seq) override { return stream_.append(payload, seq); }
  size_t pendingOutput() const override { return stream_.pendingOutput(); }
  awaitable<bool> flush() override { return stream_.flush(); }

 private:
  PacketStream& stream_;
};

}  // namespace sp::proxy
