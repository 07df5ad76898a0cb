// Fenced cut-overs across a fleet (issue 19, part 3): the protocol that lets
// an online move (MOVE BUCKET / KEY / SHARD) switch only when no proxy can
// still write to the old place. Pure: a component over a small store
// interface (proxy/etcd_fence_store over etcd; a fake store in
// tests/unit/coord/fleet_fence_test.cpp). The proxy side is
// proxy/fleet_fences (the participant) and proxy/fleet_cutover (the mover).
//
// Keys under the fleet prefix:
//   fence-epoch                  bumped by each fence: its revision is the epoch (unique in the fleet)
//   fence/<epoch>/request        the moving keys (FenceKeys)  the mover, under ITS lease
//   fence/<epoch>/ack/<proxy>    "holding"                    each proxy, under ITS lease
//   fence/<epoch>/switched       the map revision of the switch   the mover, under its lease
//   roster/<proxy>               every proxy that ever joined (no lease; deleted by an operator)
// and proxies/<name> (leased, fleet_records.hpp) says who is live.
//
// 1. The mover writes the request. 2. Each proxy that sees it holds writes
// to those keys (they wait; they never reach a backend), waits until its
// writes in flight to them ended, then acknowledges under its lease. 3. The
// mover switches (publishes the new map, guarded by the request's creation)
// only when every proxy of the roster is live and acknowledged: a proxy cut
// off from etcd (in the roster, no lease) may be writing with the map it has,
// so it blocks the switch instead of being forgotten. 4. The mover waits
// until every live proxy serves the new map, then lifts the fence (deletes
// fence/<epoch>/); a proxy releases the held writes to the map then in force.
// A request dies with the mover's lease: a mover that vanished lifts its fence.
#pragma once
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

// The keys a fence holds: what routing::MovingKeys says, as plain fields.
struct FenceKeys {
  std::string table;
  std::string kind = "bucket";  // "bucket" | "key" | "shard" (routing::moveKindName)
  std::vector<uint32_t> buckets;  // sorted
  uint32_t bucket_count = 0;
  uint32_t prefix_crc = 0;
  std::vector<uint64_t> staying_keys;
  uint64_t key = 0;
  uint32_t shard = 0;
  uint32_t shard_count = 0;
  std::string source_table;  // the physical table the keys leave
  bool holds(std::string_view t, uint32_t bucket) const;
};

// What the fence needs of etcd (the real one is proxy/etcd_fence_store; tests use a fake).
class FenceStore {
 public:
  virtual ~FenceStore() = default;
  // The store's revision after the put.
  virtual std::expected<int64_t, std::string> put(const std::string& key, const std::string& value, int64_t lease) = 0;
  // Every key under `prefix` with its value, in key order.
  virtual std::expected<std::vector<std::pair<std::string, std::string>>, std::string> list(const std::string& prefix) = 0;
  virtual std::expected<void, std::string> removePrefix(const std::string& prefix) = 0;
};

std::string fenceRoot(std::string_view prefix);  // "<prefix>/fence/"
std::string fenceEpochKey(std::string_view prefix);
std::string fenceDirectory(std::string_view prefix, int64_t epoch);  // "<prefix>/fence/<epoch>/"
std::string fenceSwitchedKey(std::string_view prefix, int64_t epoch);
std::string rosterPrefix(std::string_view prefix);
std::string rosterKey(std::string_view prefix, std::string_view name);

// A key under fence/, as a watcher sees it.
struct FenceKeyRef {
  enum class Kind : uint8_t { kRequest, kAck, kSwitched, kOther };
  int64_t epoch = 0;
  Kind kind = Kind::kOther;
};
std::optional<FenceKeyRef> parseFenceKey(std::string_view prefix, std::string_view key);

std::string fenceRequestKey(std::string_view prefix, int64_t epoch);
std::string fenceAckPrefix(std::string_view prefix, int64_t epoch);
std::string fenceAckKey(std::string_view prefix, int64_t epoch, std::string_view proxy);
std::string encodeFenceRequest(const FenceKeys& keys, std::string_view mover);
std::expected<FenceKeys, std::string> decodeFenceRequest(std::string_view json);

struct FenceProgress {
  std::vector<std::string> live;     // registered proxies (leased member keys)
  std::vector<std::string> acked;    // live proxies that acknowledged
  std::vector<std::string> missing;  // live proxies that did not (yet)
  std::vector<std::string> cut_off;  // in the roster without a lease: may write with an old map
  bool ready() const { return missing.empty() && cut_off.empty() && !live.empty(); }
};

// The mover's side.
class FenceCoordinator {
 public:
  explicit FenceCoordinator(std::string prefix) : prefix_(std::move(prefix)) {}

  // A new epoch, unique in the fleet (the revision of a put of fence-epoch).
  std::expected<int64_t, std::string> allocateEpoch(FenceStore& store);
  // Writes the request under `lease` (0: none); its creation revision (the publish guard).
  std::expected<int64_t, std::string> begin(FenceStore& store, int64_t epoch, const FenceKeys& keys,
                                            std::string_view mover, int64_t lease = 0);
  std::expected<FenceProgress, std::string> progress(FenceStore& store, int64_t epoch);
  // Checks progress once more and, only when every live proxy acknowledged,
  // runs `publish` (the map switch; returns its revision or an error) and
  // marks the fence switched. An error says who is missing.
  template <class Publish>
  std::expected<int64_t, std::string> switchWhenReady(FenceStore& store, int64_t epoch, Publish publish);
  std::expected<void, std::string> markSwitched(FenceStore& store, int64_t epoch, int64_t revision, int64_t lease = 0);
  // Live proxies whose member record says they serve a map older than `map_revision`.
  std::expected<std::vector<std::string>, std::string> notServing(FenceStore& store, int64_t map_revision);
  // Deletes fence/<epoch>/: every proxy releases.
  std::expected<void, std::string> lift(FenceStore& store, int64_t epoch);

 private:
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
