#include "proxy/exec/backend_kill.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/backend/backend_connection.hpp"
#include "proxy/exec/backend_shard_channel.hpp"

namespace sp::proxy {

namespace {

constexpr size_t kKillPacketLimit = 1 << 20;  // the answer is one OK or ERR

// A channel over a connection of its own, closed with it (never pooled).
struct OwnedConnection {
  std::unique_ptr<BackendConnection> conn;
};
class OwnedBackendChannel final : private OwnedConnection, public BackendShardChannel {
 public:
  OwnedBackendChannel(std::unique_ptr<BackendConnection> conn, const conf::BackendConfig& backend)
      : OwnedConnection{std::move(conn)}, BackendShardChannel(*OwnedConnection::conn, backend) {}
  ~OwnedBackendChannel() override { OwnedConnection::conn->stream().close(); }
};

}  // namespace

awaitable<std::expected<std::unique_ptr<ShardChannel>, std::string>> openKillChannel(
    const conf::BackendConfig& backend) {
  auto conn = co_await BackendConnection::open(backend, 0, kKillPacketLimit);
  if (!conn) co_return std::unexpected(conn.error().message);
  co_return std::make_unique<OwnedBackendChannel>(std::move(*conn), backend);
}

awaitable<std::string> killBackendQuery(conf::BackendConfig backend, uint32_t thread_id) {
  const KillTarget target{std::move(backend), thread_id};
  co_return co_await killThread(target, openKillChannel);
}

void spawnKillBackendQuery(const asio::any_io_executor& executor, const conf::BackendConfig& backend,
                           uint32_t thread_id) {
  asio::co_spawn(
      executor,
      [](conf::BackendConfig b, uint32_t id) -> awaitable<void> {
        auto err = co_await killBackendQuery(b, id);
        if (err.empty()) spdlog::info("backend {}: killed the query of thread {}", b.name, id);
        else spdlog::warn("backend {}: thread {}: {}", b.name, id, err);
      }(backend, thread_id),
      asio::detached);
}

}  // namespace sp::proxy
