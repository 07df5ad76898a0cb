// Fenced cut-overs across a fleet (issue 19, part 3): the protocol that lets
// a bucket move switch only when no proxy can still write to the old place.
// Not yet wired to MOVE BUCKET (issue 17); a component over a small store
// interface, unit-tested with a fake store (tests/unit/coord/fleet_fence_test.cpp).
//
// Keys under the fleet prefix:
//   fence/<epoch>/request        {table, buckets, mover}    written by the mover
//   fence/<epoch>/ack/<proxy>    "holding"                  each proxy, under ITS lease
//   fence/<epoch>/switched       the map revision           the mover, after the switch
// and proxies/<name> (leased, fleet_records.hpp) says who is live.
//
// 1. The mover writes the request. 2. Each proxy that sees it starts holding
// writes to those keys (they wait or fail; they never reach a backend), then
// acknowledges under its lease. 3. The mover switches (publishes the new map)
// only when every live proxy has acknowledged — a proxy whose lease expired
// is not live, and its acknowledgement vanished with the lease. 4. A proxy
// releases the hold when it applies the map of the switch.
// Safety for a proxy cut off from etcd: it counts its lease as lost at
// (time the last keepalive was SENT + TTL), never later than etcd does, and
// from then on refuses writes (policy kStrict: every key a fence could hold;
// kKnownFences: only the keys of fences it has seen) until it has a new
// lease, has read the map and has re-read the open fences.
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::coord {

using FenceClock = std::chrono::steady_clock;

// The keys a fence holds: buckets of one bucket-method table.
struct FenceKeys {
  std::string table;
  std::vector<uint32_t> buckets;  // sorted
  bool holds(std::string_view t, uint32_t bucket) const;
};

// What the fence needs of etcd (the real one is proxy/etcd_client; tests use a fake).
class FenceStore {
 public:
  virtual ~FenceStore() = default;
  virtual std::expected<void, std::string> put(const std::string& key, const std::string& value, int64_t lease) = 0;
  // Every key under `prefix` with its value, in key order.
  virtual std::expected<std::vector<std::pair<std::string, std::string>>, std::string> list(const std::string& prefix) = 0;
};

std::string fenceRequestKey(std::string_view prefix, int64_t epoch);
std::string fenceAckPrefix(std::string_view prefix, int64_t epoch);
std::string encodeFenceRequest(const FenceKeys& keys, std::string_view mover);
std::expected<FenceKeys, std::string> decodeFenceRequest(std::string_view json);

enum class FenceVerdict : uint8_t {
  kAllowed,
  kHeld,            // a cut-over of this key is in progress: wait for the switch
  kUnsynchronised,  // this proxy's lease is (or may be) lost: refused until it resynchronises
};

enum class LeaseLossPolicy : uint8_t { kStrict, kKnownFences };

// One proxy's side. Not thread-safe: the owner serializes calls.
class FenceParticipant {
 public:
  FenceParticipant(std::string prefix, std::string name, LeaseLossPolicy policy, std::set<std::string> fenced_tables)
      : prefix_(std::move(prefix)), name_(std::move(name)), policy_(policy), fenced_tables_(std::move(fenced_tables)) {}

  // A lease was granted (its request sent at `granted_at`) and the map read:
  // `open` are the fence requests found under fence/ (epoch -> keys) that
  // are not switched yet. Holds them and acknowledges each under the new
  // lease; synchronised on success.
  std::expected<void, std::string> resynchronise(FenceStore& store, int64_t lease, FenceClock::time_point granted_at,
                                                 FenceClock::duration ttl, const std::map<int64_t, FenceKeys>& open);
  // A keepalive sent at `sent_at` was answered: the lease lasts until sent_at + ttl.
  void leaseRenewed(FenceClock::time_point sent_at);
  // etcd said the lease is gone, or the session ended.
  void leaseLost();
  // A new fence request seen on the watch: hold, then acknowledge.
  std::expected<void, std::string> onRequest(FenceStore& store, int64_t epoch, const FenceKeys& keys);
  // This proxy applied the map of the switch of `epoch`: release its keys.
  void onSwitched(int64_t epoch);

  FenceVerdict mayWrite(std::string_view table, uint32_t bucket, FenceClock::time_point now) const;
  bool synchronised(FenceClock::time_point now) const;
  const std::map<int64_t, FenceKeys>& held() const { return held_; }

 private:
  std::string prefix_;
  std::string name_;
  LeaseLossPolicy policy_;
  std::set<std::string> fenced_tables_;  // tables a fence may hold (bucket tables): kStrict refuses these
  int64_t lease_ = 0;
  FenceClock::duration ttl_{};
  std::optional<FenceClock::time_point> lease_deadline_;  // nullopt: no lease
  std::map<int64_t, FenceKeys> held_;
};

struct FenceProgress {
  std::vector<std::string> live;     // registered proxies (leased member keys)
  std::vector<std::string> acked;    // live proxies that acknowledged
  std::vector<std::string> missing;  // live proxies that did not (yet)
  bool ready() const { return missing.empty() && !live.empty(); }
};

// The mover's side.
class FenceCoordinator {
 public:
  explicit FenceCoordinator(std::string prefix) : prefix_(std::move(prefix)) {}

  std::expected<void, std::string> begin(FenceStore& store, int64_t epoch, const FenceKeys& keys,
                                         std::string_view mover);
  std::expected<FenceProgress, std::string> progress(FenceStore& store, int64_t epoch);
  // Checks progress once more and, only when every live proxy acknowledged,
  // runs `publish` (the map switch; returns its revision or an error) and
  // marks the fence switched. An error says who is missing.
  template <class Publish>
  std::expected<int64_t, std::string> switchWhenReady(FenceStore& store, int64_t epoch, Publish publish);

 private:
  std::expected<void, std::string> markSwitched(FenceStore& store, int64_t epoch, int64_t revision);
  std::string prefix_;
};

std::string describeMissing(const FenceProgress& progress);

template <class Publish>
std::expected<int64_t, std::string> FenceCoordinator::switchWhenReady(FenceStore& store, int64_t epoch, Publish publish) {
  auto p = progress(store, epoch);
  if (!p) return std::unexpected(p.error());
  if (!p->ready()) return std::unexpected(describeMissing(*p));
  std::expected<int64_t, std::string> revision = publish();
  if (!revision) return revision;
  if (auto marked = markSwitched(store, epoch, *revision); !marked) return std::unexpected(marked.error());
  return revision;
}

}  // namespace sp::coord
