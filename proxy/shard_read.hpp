// Reading one shard's answer with the per-shard timeout (scatter.shard_timeout_ms),
// shared by the scatter executor and the split-write executor.
#pragma once
#include <chrono>
#include <expected>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "proxy/backend_connection.hpp"
#include "proxy/backend_kill.hpp"
#include "proxy/net.hpp"

namespace sp::proxy {

enum class ShardReadError : uint8_t {
  kLost,     // the connection failed or the server closed it
  kTimeout,  // no packet within the timeout: the connection is closed and marked broken
};

// The next message of `conn` (a connection to `backend`), waiting at most
// `timeout` for it (0 = no limit). A timed-out connection is left
// mid-response, so it is closed here: the caller must never return it to a
// pool as reusable (it is marked broken). Closing does not stop the server,
// which would run the query to its end, so its thread is sent KILL QUERY.
inline awaitable<std::expected<StreamMessage, ShardReadError>> readShard(BackendConnection& conn,
                                                                        std::chrono::milliseconds timeout,
                                                                        const conf::BackendConfig& backend) {
  using namespace boost::asio::experimental::awaitable_operators;
  if (conn.broken()) co_return std::unexpected(ShardReadError::kLost);
  if (timeout.count() == 0 || conn.stream().hasBufferedPacket()) {
    auto msg = co_await conn.stream().read();
    if (!msg) {
      conn.markBroken();
      co_return std::unexpected(ShardReadError::kLost);
    }
    co_return *msg;
  }
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  timer.expires_after(timeout);
  auto result = co_await (conn.stream().read() || timer.async_wait(kNoThrow));
  if (result.index() == 1) {
    conn.markBroken();
    conn.stream().close();
    spawnKillBackendQuery(executor, backend, conn.serverThreadId());
    co_return std::unexpected(ShardReadError::kTimeout);
  }
  auto& msg = std::get<0>(result);
  if (!msg) {
    conn.markBroken();
    co_return std::unexpected(ShardReadError::kLost);
  }
  co_return *msg;
}

}  // namespace sp::proxy
