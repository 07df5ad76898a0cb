#include "proxy/fleet/fleet_fences.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

namespace sp::proxy {

namespace {
constexpr auto kDrainPoll = std::chrono::milliseconds(1);

// The fields FenceKeys and MovingKeys share, in either direction.
template <typename From, typename To>
void copyKeyFields(const From& keys, To& out) {
  out.buckets = keys.buckets;
  out.bucket_count = keys.bucket_count;
  out.prefix_crc = keys.prefix_crc;
  out.staying_keys = keys.staying_keys;
  out.key = keys.key;
  out.shard = keys.shard;
  out.shard_count = keys.shard_count;
}
}  // namespace

coord::FenceKeys fenceKeysOf(const routing::MovingKeys& keys, const std::string& source_table) {
  coord::FenceKeys out;
  out.table = keys.table;
  out.kind = routing::moveKindName(keys.kind);
  copyKeyFields(keys, out);
  out.source_table = source_table;
  return out;
}

std::expected<routing::MovingKeys, std::string> movingKeysOf(const coord::FenceKeys& keys) {
  routing::MovingKeys out;
  out.table = keys.table;
  auto kind = routing::moveKindFrom(keys.kind);
  if (!kind) return std::unexpected("unknown kind of moving keys: " + keys.kind);
  out.kind = *kind;
  if ((out.kind == routing::MoveKind::kBuckets && keys.bucket_count == 0) ||
      (out.kind == routing::MoveKind::kShard && keys.shard_count == 0)) {
    return std::unexpected("the fence names no bucket or shard count");
  }
  copyKeyFields(keys, out);
  return out;
}

struct FleetFences::Fence {
  uint64_t watch = 0;
  std::string what;               // "chan buckets [17]" for the log
  int64_t switched_revision = 0;  // the map revision of the switch (0: not switched, or not seen)
  int64_t acked_lease = 0;
  bool draining = false;
  bool lifted = false;
  bool released = false;
  uint64_t release_epoch = 0;  // WriteHold epoch at the release: forgotten once no older transaction is open
};

FleetFences::FleetFences(ProxyContext& context, const conf::FleetConfig& config, EtcdClient& client,
                         asio::any_io_executor executor)
    : context_(context), config_(config), executor_(std::move(executor)), store_(client) {}

void FleetFences::hold(int64_t epoch, const std::string& request) {
  auto keys = coord::decodeFenceRequest(request);
  std::expected<routing::MovingKeys, std::string> moving =
      keys ? movingKeysOf(*keys) : std::expected<routing::MovingKeys, std::string>(std::unexpected(keys.error()));
  if (!moving) {
    // Not acknowledged: the mover's cut-over times out and lifts the fence.
    spdlog::error("fleet {}: fence {} not held: {}", config_.name, epoch, moving.error());
    return;
  }
  auto fence = std::make_shared<Fence>();
  fence->what = keys->table + " (" + keys->kind + ")";
  fence->watch = context_.write_hold.watch(*moving, keys->source_table);
  context_.write_hold.hold(fence->watch);
  fences_[epoch] = fence;
  spdlog::info("fleet {}: fence {} holds writes to {}", config_.name, epoch, fence->what);
  if (lease_ != 0) asio::co_spawn(executor_, drainAndAcknowledge(epoch, lease_), asio::detached);
}

awaitable<void> FleetFences::drainAndAcknowledge(int64_t epoch, int64_t lease) {
  auto it = fences_.find(epoch);
  if (it == fences_.end() || it->second->draining) co_return;
  auto fence = it->second;
  fence->draining = true;
  asio::steady_timer timer(executor_);
  // No deadline of its own: the mover's fleet.fence_ack_timeout_ms bounds the wait, then it lifts the fence.
  while (!fence->lifted && lease_ == lease && !context_.write_hold.drained(fence->watch)) {
    timer.expires_after(kDrainPoll);
    co_await timer.async_wait(kNoThrow);
  }
  fence->draining = false;
  if (fence->lifted || lease_ != lease || fences_.find(epoch) == fences_.end()) co_return;
  acknowledge(epoch);
}

void FleetFences::acknowledge(int64_t epoch) {
  auto& fence = *fences_.at(epoch);
  auto put = store_.put(coord::fenceAckKey(config_.etcd_prefix, epoch, config_.name), "holding", lease_);
  if (!put) {
    spdlog::warn("fleet {}: fence {}: acknowledgement not written: {}", config_.name, epoch, put.error());
    return;
  }
  fence.acked_lease = lease_;
}

void FleetFences::onRequest(int64_t epoch, const std::string& request) {
  if (fences_.contains(epoch)) return;  // read at the session's start already
  hold(epoch, request);
}

void FleetFences::onSwitched(int64_t epoch, int64_t revision) {
  if (auto it = fences_.find(epoch); it != fences_.end()) it->second->switched_revision = revision;
}

void FleetFences::release(Fence& fence) {
  auto map = context_.shard_map.load();
  context_.write_hold.refuse(fence.watch, false);
  // Writes planned with an older map than the one in force plan again.
  context_.write_hold.switched(fence.watch, map ? map->version() : 1);
  fence.release_epoch = context_.write_hold.advanceEpoch();
  fence.released = true;
}

void FleetFences::onLifted(int64_t epoch) {
  auto it = fences_.find(epoch);
  if (it == fences_.end() || it->second->lifted) return;
  auto& fence = *it->second;
  fence.lifted = true;
  if (fence.switched_revision > context_.fleet_map_revision.load()) {
    context_.write_hold.refuse(fence.watch, true);
    spdlog::error("fleet {}: fence {} lifted after a switch to map revision {}, which this proxy has not applied "
                  "(it serves revision {}): writes to {} are refused until it has",
                  config_.name, epoch, fence.switched_revision, context_.fleet_map_revision.load(), fence.what);
    return;
  }
  release(fence);
  spdlog::info("fleet {}: fence {} lifted: writes to {} go on with map version {}", config_.name, epoch, fence.what,
               context_.shard_map.load() ? context_.shard_map.load()->version() : 0);
}

void FleetFences::sessionLost() {
  lease_ = 0;
  for (auto& [epoch, fence] : fences_) {
    fence->acked_lease = 0;
    if (fence->released) continue;
    context_.write_hold.refuse(fence->watch, true);
    spdlog::warn("fleet {}: no session with etcd while fence {} holds {}: writes to them are refused (9138) until "
                 "the fences and the map are read again",
                 config_.name, epoch, fence->what);
  }
}

void FleetFences::resynchronise(int64_t lease, const std::map<int64_t, Open>& open) {
  lease_ = lease;
  for (const auto& [epoch, o] : open) {
    auto it = fences_.find(epoch);
    if (it == fences_.end()) {
      hold(epoch, o.request);
      it = fences_.find(epoch);
      if (it == fences_.end()) continue;
    } else if (!it->second->lifted) {
      context_.write_hold.hold(it->second->watch);
      context_.write_hold.refuse(it->second->watch, false);
      asio::co_spawn(executor_, drainAndAcknowledge(epoch, lease_), asio::detached);
    }
    if (o.switched_revision) it->second->switched_revision = o.switched_revision;
  }
  // Lifted while this proxy was away; the map was read after the fences, so it is past their switch.
  std::vector<int64_t> gone;
  for (const auto& [epoch, fence] : fences_) {
    if (!fence->lifted && !open.contains(epoch)) gone.push_back(epoch);
  }
  for (int64_t epoch : gone) onLifted(epoch);
  sweep();
}

void FleetFences::sweep() {
  for (auto it = fences_.begin(); it != fences_.end();) {
    auto& fence = *it->second;
    if (fence.lifted && !fence.released && fence.switched_revision <= context_.fleet_map_revision.load()) {
      release(fence);
      spdlog::info("fleet {}: fence {}: the switch's map is applied now; writes to {} go on", config_.name, it->first,
                   fence.what);
    }
    // Transactions that began before the release may still plan with the old map: the watch catches them until they end.
    if (fence.released && !fence.draining && context_.write_hold.openTransactionsBefore(fence.release_epoch) == 0) {
      context_.write_hold.unwatch(fence.watch);
      it = fences_.erase(it);
      continue;
    }
    ++it;
  }
}

}  // namespace sp::proxy
