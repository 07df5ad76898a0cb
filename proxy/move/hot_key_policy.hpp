// The decisions of the hot-key policy (overload.hot_key_auto_move;
// docs/availability.md, "Isolating a hot key automatically"): fed every
// check with what SHOW HOT KEYS sees (HotKeyTracker), the map in force and
// the moves running, it says when to move which key where. Pure: no clock,
// no thread, no logging; HotKeyMover (hot_key_mover.hpp) feeds it and runs
// the move it asks for; unit tests drive it with a fake clock.
//
// A key is due when, at every check for sustain_seconds, it kept
// min_shard_share_pct of its shard's keyed statements at
// min_statements_per_second or more. Only keys of bucket tables are moved
// (MOVE KEY needs one); a key pinned by the map's hot_keys already has a
// shard of its own and is never moved again. At most one move of the policy
// runs at a time, none while a move of the same table runs (the coordinator
// would refuse it), and two of its moves start at least cooldown_seconds
// apart, counted from each attempt whether it succeeded, failed or was
// refused.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conf/overload_config.hpp"
#include "proxy/core/hot_key_tracker.hpp"
#include "proxy/move/move_store.hpp"
#include "routing/map/move_plan.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::proxy {

// What one check sees.
struct HotKeyPolicyInput {
  std::vector<HotKeyRow> keys;                // HotKeyTracker::top(): the busiest keys
  std::map<std::string, double> shard_rates;  // HotKeyTracker::shardRates(): keyed statements/s per shard
  const routing::CompiledShardMap* map = nullptr;  // in force (null: none)
  std::vector<MoveRecord> running;            // moves whose coroutine runs now (any starter)
};

// A move to start: the request MOVE KEY would make, and why.
struct HotKeyMoveDecision {
  routing::MoveRequest request;  // kKey: table, key, target shard
  std::string source_shard;
  double share = 0;              // of its shard's keyed statements, 0..1
  double statements_per_s = 0;
  double hot_seconds = 0;        // how long it has been due
};

class HotKeyPolicy {
 public:
  using Clock = std::chrono::steady_clock;

  // Settings of the next checks; turning the policy off forgets every key.
  void configure(const conf::HotKeyAutoMoveConfig& settings);
  // Forgets every key seen so far (this proxy stopped deciding: in a fleet,
  // it lost ha/leader); cooldown and the move in flight are kept.
  void forgetKeys() { hot_.clear(); }

  // One check. A decision must be answered with started() or refused().
  std::optional<HotKeyMoveDecision> check(Clock::time_point now, const HotKeyPolicyInput& input);
  void started(Clock::time_point now, int64_t move_id);
  void refused(Clock::time_point now);

  // Why the last check moved nothing although a key was due (empty: none
  // was, or it moved one): for a log line when it changes.
  const std::string& blocked() const { return blocked_; }
  std::optional<int64_t> inFlight() const { return in_flight_; }

 private:
  struct Hot {
    std::string shard;        // where it was seen hot
    Clock::time_point since;  // first check of the current run above both thresholds
  };
  using KeyId = std::pair<std::string, uint64_t>;  // table, key value

  void track(Clock::time_point now, const HotKeyPolicyInput& input);
  bool qualifies(const HotKeyRow& row, const routing::CompiledShardMap& map) const;
  bool waiting(Clock::time_point now, const HotKeyPolicyInput& input);
  // The least busy allowed shard of `rule` other than the key's own; nullopt: none allowed.
  std::optional<std::string> target(const routing::TableRule& rule, uint64_t key,
                                     const std::map<std::string, double>& shard_rates) const;

  conf::HotKeyAutoMoveConfig settings_;
  std::map<KeyId, Hot> hot_;
  std::optional<Clock::time_point> last_attempt_;
  std::optional<int64_t> in_flight_;
  std::string blocked_;
};

}  // namespace sp::proxy
