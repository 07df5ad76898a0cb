// Statements per shard-key value, for SHOW HOT KEYS (docs/admin.md): every
// statement routed to one key value is recorded (table, value, shard,
// backend, read or write) in a few stripes, each under its own mutex and
// holding one HotKeySketch per table (hot_key_sketch.hpp) and the decayed
// statement count of each shard. Memory is bounded by tables x stripes x
// overload.hot_keys_tracked (tables and shards come from the shard map),
// whatever values the clients send; rates are decayed over about
// kWindowSeconds.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/core/hot_key_sketch.hpp"

namespace sp::proxy {

// One key as SHOW HOT KEYS lists it.
struct HotKeyRow {
  std::string table;
  uint64_t key = 0;
  std::string shard;
  std::string backend;
  double statements_per_s = 0;  // guaranteed part (count - error), decayed
  double writes_per_s = 0;
  double shard_statements_per_s = 0;  // every keyed statement routed to that shard
  double share() const { return shard_statements_per_s > 0 ? statements_per_s / shard_statements_per_s : 0; }
};

class HotKeyTracker {
 public:
  static constexpr double kWindowSeconds = 5;  // the decay's time constant
  static constexpr size_t kStripes = 8;

  // `tracked`: counters per table (overload.hot_keys_tracked; 0: off).
  explicit HotKeyTracker(size_t tracked = 64);
  // A new size forgets what was counted (RELOAD; the same size keeps it).
  void configure(size_t tracked);
  bool enabled() const { return tracked_.load(std::memory_order_relaxed) != 0; }

  void record(std::string_view table, uint64_t key, bool write, std::string_view shard, std::string_view backend) {
    record(table, key, write, shard, backend, secondsNow());
  }
  // `now`: seconds on a clock of the caller's (tests).
  void record(std::string_view table, uint64_t key, bool write, std::string_view shard, std::string_view backend,
              double now);
  // The busiest keys of all tables, busiest first (at most `limit`).
  std::vector<HotKeyRow> top(size_t limit) const { return top(limit, secondsNow()); }
  std::vector<HotKeyRow> top(size_t limit, double now) const;
  // Keyed statements per second of every shard name seen (the hot-key
  // policy's choice of a target: the least busy shard).
  std::map<std::string, double> shardRates() const { return shardRates(secondsNow()); }
  std::map<std::string, double> shardRates(double now) const;
  size_t counters() const;  // counters in use (bounded: tests)

 private:
  struct NameLess {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a < b; }
  };
  struct Stripe {
    mutable std::mutex mutex;
    DecayClock clock{kWindowSeconds};
    std::map<std::string, HotKeySketch, NameLess> tables;
    std::map<std::string, double, NameLess> shards;  // decayed statements per shard
  };
  double secondsNow() const;
  size_t perStripe() const;

  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<size_t> tracked_;
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace sp::proxy
