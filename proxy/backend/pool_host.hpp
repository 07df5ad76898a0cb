// What the shard-map publisher needs of a thread that owns backend pools (a
// worker): change its pools when a reload adds or removes backends, and show
// them. An interface so that the map publisher (proxy/maps) and the
// subsystems above it never see the session or the worker.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "conf/backend_config.hpp"
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

  // A primary switch of `backend` (proxy/ha/switchover.cpp), step by step:
  // holdBackend: its pool lends nothing new (acquirers wait, at most until
  // `until`); busyConnections: its connections running a statement or an
  // open transaction (a session idle outside a transaction on a pinned
  // connection is not busy); repointBackend: the pool serves `primary`
  // from now on, the replicas' pools are rebuilt for `replicas`, and the
  // sessions idle on a pinned connection to the old primary are closed
  // (their connection-bound state lived there; returns how many);
  // releaseBackend: the waiting acquirers go on.
  virtual bool holdBackend(const std::string& backend, std::chrono::steady_clock::time_point until) = 0;
  virtual std::optional<uint32_t> busyConnections(const std::string& backend) = 0;
  // `primary` null: the primary stays (a REJOIN changes only the replicas).
  // `sever`: connections lent to the old primary are cut (a failover).
  virtual std::optional<uint32_t> repointBackend(const std::string& backend, const conf::BackendConfig* primary,
                                                 const std::vector<conf::BackendConfig>& replicas, bool sever) = 0;
  virtual bool releaseBackend(const std::string& backend) = 0;
  // The health monitor's verdict on the server at `address` (host:port):
  // every pool lending to it now is marked down (`down_reason` non-empty:
  // BackendPool::markDown) or up again (empty).
  virtual bool markServer(const std::string& address, const std::string& down_reason) = 0;
};

}  // namespace sp::proxy
