#include "proxy/lifecycle/lifecycle_links.hpp"

#include <fmt/format.h>

#include "conf/config.hpp"
#include "proxy/core/cutover_mark.hpp"

namespace sp::proxy {

namespace {
std::string describe(const std::string& backend, const BackendError& e) {
  if (e.kind == BackendError::Kind::kServer) return fmt::format("backend {}: error {}: {}", backend, e.code, e.message);
  return fmt::format("backend {}: {}", backend, e.message);
}
}  // namespace

LifecycleLinks::~LifecycleLinks() {
  for (auto& [name, conn] : links_) {
    if (conn) conn->stream().close();
  }
}

awaitable<std::expected<BackendConnection*, std::string>> LifecycleLinks::link(const std::string& backend) {
  auto it = links_.find(backend);
  if (it != links_.end() && it->second && !it->second->broken()) co_return it->second.get();
  // The backend's current primary (a SWITCHOVER may have changed it).
  const auto config = currentPrimary(context_, backend);
  if (!config) co_return std::unexpected(fmt::format("backend {} is not in the configuration", backend));
  auto conn = co_await BackendConnection::open(*config, 0, context_.config().server.max_packet_bytes);
  if (!conn) co_return std::unexpected(fmt::format("backend {}: {}", backend, conn.error().message));
  // Archiving moves rows between a shard's tables: maintenance, flagged in the
  // binlog (LOG_EVENT_SKIP_REPLICATION_F) so the change stream drops it.
  if (auto ok = co_await (*conn)->command(protocol::Command::kQuery, kMaintenanceSessionSql); !ok) {
    co_return std::unexpected(describe(backend, ok.error()));
  }
  auto* raw = conn->get();
  links_[backend] = std::move(*conn);
  co_return raw;
}

awaitable<std::expected<BackendConnection::TextRows, std::string>> LifecycleLinks::rows(const std::string& backend,
                                                                                        std::string_view sql) {
  auto conn = co_await link(backend);
  if (!conn) co_return std::unexpected(conn.error());
  auto r = co_await (*conn)->queryRows(sql);
  if (!r) co_return std::unexpected(describe(backend, r.error()));
  co_return std::move(*r);
}

awaitable<std::expected<protocol::OkPacket, std::string>> LifecycleLinks::run(const std::string& backend,
                                                                             std::string_view sql) {
  auto conn = co_await link(backend);
  if (!conn) co_return std::unexpected(conn.error());
  auto r = co_await (*conn)->command(protocol::Command::kQuery, sql);
  if (!r) co_return std::unexpected(describe(backend, r.error()));
  co_return *r;
}

}  // namespace sp::proxy
