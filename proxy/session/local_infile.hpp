// LOAD DATA LOCAL INFILE through the proxy (docs/security.md, "Local
// files"): the server asks for the client's file (0xfb + its name), the
// client sends it in packets closed by an empty one, the server answers.
// This relays the client's packets to the backend one at a time, so memory
// stays at one packet whatever the file's size; bounded by
// limits.local_infile_max_bytes and by server.net_read_timeout_s for each
// packet, as MariaDB's net_read_timeout bounds a client that stops sending.
#pragma once
#include <chrono>
#include <cstdint>

#include "proxy/exec/route_execution.hpp"
#include "proxy/net/packet_stream.hpp"

namespace sp::proxy {

class SessionInfileSource final : public LocalInfileSource {
 public:
  // `max_bytes`: 0 = no limit.
  SessionInfileSource(PacketStream& client, bool allowed, uint64_t max_bytes, std::chrono::seconds read_timeout)
      : client_(client), allowed_(allowed), max_bytes_(max_bytes), read_timeout_(read_timeout) {}

  bool allowed() const override { return allowed_; }
  awaitable<InfileRelayed> relay(protocol::ByteView request, uint8_t client_seq, ShardChannel& shard,
                                 uint8_t shard_seq) override;

 private:
  PacketStream& client_;
  bool allowed_;
  uint64_t max_bytes_;
  std::chrono::seconds read_timeout_;
};

}  // namespace sp::proxy
