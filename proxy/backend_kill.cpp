#include "proxy/backend_kill.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/backend_connection.hpp"

namespace sp::proxy {

namespace {
constexpr size_t kKillPacketLimit = 1 << 20;  // the answer is one OK or ERR
constexpr uint16_t kUnknownThread = 1094;     // ER_NO_SUCH_THREAD: the query ended meanwhile
}  // namespace

awaitable<std::string> killBackendQuery(conf::BackendConfig backend, uint32_t thread_id) {
  auto conn = co_await BackendConnection::open(backend, 0, kKillPacketLimit);
  if (!conn) co_return fmt::format("cannot connect to send KILL QUERY: {}", conn.error().message);
  const std::string sql = fmt::format("KILL QUERY {}", thread_id);
  auto r = co_await (*conn)->command(protocol::Command::kQuery, sql);
  (*conn)->stream().close();
  if (!r && !(r.error().kind == BackendError::Kind::kServer && r.error().code == kUnknownThread)) {
    co_return fmt::format("{} failed: {}", sql, r.error().message);
  }
  co_return std::string();
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
