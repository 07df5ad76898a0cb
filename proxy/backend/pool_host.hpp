// What the shard-map publisher needs of a thread that owns backend pools (a
// worker): change its pools when a reload adds or removes backends, and show
// them. An interface so that the map publisher (proxy/maps) and the
// subsystems above it never see the session or the worker.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "proxy/backend/backend_pool.hpp"

namespace sp::proxy {

struct PoolSnapshot {
  std::string name;
  std::string address;
  PoolStats stats;
  bool draining = false;
  // A replica's pool (docs/availability.md): `backend` names its group.
  bool replica = false;
  std::string backend;
};

class PoolHost {
 public:
  virtual ~PoolHost() = default;
  virtual unsigned index() const = 0;
  // Both run on the host's own thread and wait for it, bounded: false or
  // nullopt when it did not answer in time (shutting down).
  // Retires the pools named in `retire` (drained as their borrowers return
  // them), then starts pools for `add`.
  virtual bool changePools(const std::vector<std::string>& retire, const std::vector<conf::BackendConfig>& add) = 0;
  virtual std::optional<std::vector<PoolSnapshot>> snapshotPools() = 0;
};

}  // namespace sp::proxy
