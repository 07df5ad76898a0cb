// Where an execution writes the packets the client gets: framed with
// sequence ids, buffered until flush(). The session's PacketStream in
// production (PacketStreamSink), a recorder in unit tests.
#pragma once
#include <cstddef>
#include <cstdint>

#include "protocol/session_track.hpp"
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
  // The client's session_track_* settings when it negotiated
  // CLIENT_SESSION_TRACK: its OK packets then carry the part of each
  // backend report these settings select. Null: reports are taken out.
  virtual const protocol::TrackingSettings* tracking() const { return nullptr; }
};

class PacketStreamSink final : public ClientSink {
 public:
  explicit PacketStreamSink(PacketStream& stream, const protocol::TrackingSettings* tracking = nullptr)
      : stream_(stream), tracking_(tracking) {}
  uint8_t append(protocol::ByteView payload, uint8_t seq) override { return stream_.append(payload, seq); }
  size_t pendingOutput() const override { return stream_.pendingOutput(); }
  awaitable<bool> flush() override { return stream_.flush(); }
  const protocol::TrackingSettings* tracking() const override { return tracking_; }

 private:
  PacketStream& stream_;
  const protocol::TrackingSettings* tracking_;
};

}  // namespace sp::proxy
