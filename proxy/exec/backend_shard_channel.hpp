// A ShardChannel over a borrowed BackendConnection: COM_QUERY framing, reads
// with the per-shard timeout (scatter.shard_timeout_ms; 0 = none). A read
// that times out leaves the server mid-answer, so the connection is closed
// and marked broken, and the server's thread gets KILL QUERY (the server
// would otherwise run the query to its end).
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "conf/backend_config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/exec/shard_channel.hpp"

namespace sp::proxy {
class BackendPool;
}

namespace sp::proxy {

class BackendShardChannel : public ShardChannel {
 public:
  BackendShardChannel(BackendConnection& conn, const conf::BackendConfig& backend,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(0))
      : ShardChannel(conn.capabilities(), conn.mariadbCapabilities()), conn_(conn), backend_(backend), timeout_(timeout) {}

  BackendConnection& connection() { return conn_; }

  awaitable<bool> flush() override;
  bool hasBufferedPacket() const override { return conn_.stream().hasBufferedPacket(); }
  bool tryFill() override { return conn_.stream().tryFill(); }
  void markBroken() override { conn_.markBroken(); }
  bool broken() const override { return conn_.broken(); }
  uint8_t writeFilePacket(protocol::ByteView payload, uint8_t seq) override { return conn_.stream().append(payload, seq); }
  uint8_t lastSequenceId() const override { return last_seq_; }
  void answered() override {
    conn_.touch();
    conn_.noteStatus(answer().statusFlags());
  }

 protected:
  void write(protocol::ByteView head, protocol::ByteView rest) override;
  std::optional<std::expected<protocol::ByteView, ChannelError>> tryReadPacket() override;
  awaitable<std::expected<protocol::ByteView, ChannelError>> readPacket() override;

 private:
  BackendConnection& conn_;
  const conf::BackendConfig& backend_;
  std::chrono::milliseconds timeout_;
  uint8_t last_seq_ = 0;
};

}  // namespace sp::proxy

namespace sp::proxy {

// A connection an execution used, back to its pool: closed instead when its
// answer was not read to the end or it was left inside a transaction.
void releaseShardConnection(BackendPool& pool, std::unique_ptr<BackendConnection> conn, const ShardChannel& channel);

// A connection borrowed for a multi-shard execution and the channel it is read through.
struct LentShard {
  BackendPool* pool = nullptr;
  std::unique_ptr<BackendConnection> conn;
  std::unique_ptr<BackendShardChannel> channel;

  void lend(BackendPool& from, std::unique_ptr<BackendConnection> borrowed, std::chrono::milliseconds timeout);
};
// Every lent connection back (releaseShardConnection).
void releaseLent(std::vector<LentShard>& shards);

}  // namespace sp::proxy
