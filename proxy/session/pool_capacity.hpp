// Whether a statement that borrows one connection per shard target can ever
// get them all from this worker's pools: a statement needing more connections
// to one backend than the pool holds would wait for the pool timeout and fail
// anyway; it is refused at once with the setting to change.
#pragma once
#include <fmt/format.h>

#include <map>
#include <optional>
#include <span>
#include <string>

#include "protocol/generic_packets.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/worker.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

inline std::optional<protocol::ErrPacket> poolShortfall(Worker& worker, std::span<const routing::RouteTarget> targets) {
  std::map<std::string_view, uint32_t> need;
  for (const auto& t : targets) ++need[t.backend];
  for (const auto& [backend, count] : need) {
    BackendPool* pool = worker.pool(backend);
    if (!pool) continue;  // the executors report unknown backends themselves
    uint32_t max = pool->maxSize();
    if (count > max) {
      return client_error::make(client_error::kGeneric, fmt::format(
          "shardproxy: this statement needs {} connections to backend {} at once, but a worker thread's pool for it "
          "holds at most {} (max_connections of the backend is divided among the worker threads): raise it",
          count, backend, max));
    }
  }
  return std::nullopt;
}

}  // namespace sp::proxy
