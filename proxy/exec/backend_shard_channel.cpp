#include "proxy/exec/backend_shard_channel.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "proxy/exec/backend_kill.hpp"
#include "proxy/backend/backend_pool.hpp"

namespace sp::proxy {

awaitable<bool> BackendShardChannel::flush() {
  const bool sent = co_await conn_.stream().flush();
  if (!sent) conn_.markBroken();
  co_return sent;
}

void BackendShardChannel::write(protocol::ByteView head, protocol::ByteView rest) {
  conn_.stream().append(head, rest, 0);
}

std::optional<std::expected<protocol::ByteView, ChannelError>> BackendShardChannel::tryReadPacket() {
  if (conn_.broken()) return std::unexpected(ChannelError::kLost);
  auto msg = conn_.stream().tryRead();
  if (!msg) return std::nullopt;
  last_seq_ = msg->sequence_id;
  return msg->payload;
}

// Waits at most timeout_ (0 = no limit) for the next packet. A timed-out
// connection is left mid-answer, so it is closed here and marked broken: it
// must never go back to a pool as reusable. Closing does not stop the server,
// which would run the query to its end, so its thread is sent KILL QUERY.
awaitable<std::expected<protocol::ByteView, ChannelError>> BackendShardChannel::readPacket() {
  using namespace boost::asio::experimental::awaitable_operators;
  if (conn_.broken()) co_return std::unexpected(ChannelError::kLost);
  std::expected<StreamMessage, StreamError> msg = std::unexpected(StreamError::kIo);
  if (timeout_.count() == 0 || conn_.stream().hasBufferedPacket()) {
    msg = co_await conn_.stream().read();
  } else {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor);
    timer.expires_after(timeout_);
    auto result = co_await (conn_.stream().read() || timer.async_wait(kNoThrow));
    if (result.index() == 1) {
      conn_.markBroken();
      conn_.stream().close();
      spawnKillBackendQuery(executor, backend_, conn_.serverThreadId());
      co_return std::unexpected(ChannelError::kTimeout);
    }
    msg = std::move(std::get<0>(result));
  }
  if (!msg) {
    conn_.markBroken();
    co_return std::unexpected(ChannelError::kLost);
  }
  last_seq_ = msg->sequence_id;
  co_return msg->payload;
}

void releaseShardConnection(BackendPool& pool, std::unique_ptr<BackendConnection> conn, const ShardChannel& channel) {
  if (!conn) return;
  const bool open_transaction = channel.answer().statusFlags() & protocol::status::kInTrans;
  if (!channel.done() || open_transaction) conn->markBroken();
  pool.release(std::move(conn));
}

void LentShard::lend(BackendPool& from, std::unique_ptr<BackendConnection> borrowed,
                     std::chrono::milliseconds timeout) {
  pool = &from;
  conn = std::move(borrowed);
  channel = std::make_unique<BackendShardChannel>(*conn, from.config(), timeout);
}

void releaseLent(std::vector<LentShard>& shards) {
  for (auto& s : shards) {
    if (s.conn) releaseShardConnection(*s.pool, std::move(s.conn), *s.channel);
  }
}

}  // namespace sp::proxy
