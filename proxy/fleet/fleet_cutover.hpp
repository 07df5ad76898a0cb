// The mover's side of a fenced cut-over in a fleet (coord/fleet_fence.hpp;
// docs/operations.md, "Fleets"), for one attempt of one move's cut-over:
//   fence():   publishes the fence (under this proxy's lease) and waits until
//              every proxy of the roster is live and holds the keys
//              (fleet.fence_ack_timeout_ms; else it lifts and says who not);
//   guard():   the map of the switch is published only while the fence stands;
//   finish():  marks the switch, waits until every live proxy serves the new
//              map (fleet.fence_serve_timeout_ms), lifts the fence;
//   abandon(): lifts without a switch (routing stays on the source).
// etcd calls block the move thread (EtcdFenceStore); the waits poll.
#pragma once
#include <chrono>
#include <expected>
#include <optional>
#include <string>

#include "coord/etcd_messages.hpp"
#include "coord/fleet_fence.hpp"
#include "proxy/fleet/etcd_client.hpp"
#include "proxy/fleet/etcd_fence_store.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

class FleetCutover {
 public:
  FleetCutover(ProxyContext& context, coord::FenceKeys keys, std::string mover);

  awaitable<std::expected<void, std::string>> fence();
  const coord::EtcdGuard* guard() const { return guard_ ? &*guard_ : nullptr; }
  // `map_revision`: the revision the switch published. A note for the move's record.
  awaitable<std::string> finish(int64_t map_revision);
  void abandon();
  double ackMillis() const { return ack_ms_; }

 private:
  awaitable<void> pause();

  ProxyContext& context_;
  const conf::FleetConfig& config_;
  EtcdClient client_;
  EtcdFenceStore store_;
  coord::FenceCoordinator coordinator_;
  coord::FenceKeys keys_;
  std::string mover_;
  int64_t epoch_ = 0;  // 0: no fence standing
  std::optional<coord::EtcdGuard> guard_;
  double ack_ms_ = 0;
};

}  // namespace sp::proxy
