// Which shard-key values take most of a table's statements, in bounded
// memory whatever the clients send (SHOW HOT KEYS; docs/availability.md,
// "Overload: hot keys"). A space-saving sketch (Metwally et al.): at most
// `capacity` counters; a key not counted takes the smallest counter over,
// inheriting its count as its possible error. Every key whose true count
// exceeds total/capacity is guaranteed a counter, and `count - error` never
// overstates a key's statements.
//
// Counts are exponentially decayed with forward decay (Cormode et al.): a
// statement at time t adds weight e^((t - landmark) / tau), so counters
// recorded at different times compare without touching each of them; the
// caller's DecayClock turns a sum back into statements per second and
// rescales (moves the landmark) long before the weights overflow.
// No clock, thread or lock of its own: HotKeyTracker (hot_key_tracker.hpp)
// owns those; unit tests drive it directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sp::proxy {

// Forward decay's clock: weights relative to a landmark, sums back to rates.
class DecayClock {
 public:
  explicit DecayClock(double tau_seconds) : tau_(tau_seconds) {}
  double weight(double now) const;
  // Statements per second of `sum` (a sum of weights) seen from `now`.
  double rate(double sum, double now) const;
  // True when the weights grew large enough to move the landmark to `now`;
  // rescale() then returns the factor every sum must be multiplied by.
  bool needsRescale(double now) const { return (now - landmark_) / tau_ > kMaxExponent; }
  double rescale(double now);
  double tau() const { return tau_; }

 private:
  static constexpr double kMaxExponent = 40;  // e^40 ~ 2e17: far from a double's range, still precise
  double tau_;
  double landmark_ = 0;
};

class HotKeySketch {
 public:
  struct Entry {
    uint64_t key = 0;
    double count = 0;   // decayed statements, an upper bound
    double error = 0;   // how much of count may belong to keys it replaced
    double writes = 0;  // decayed writes since it took this counter
    std::string shard;
    std::string backend;
  };

  explicit HotKeySketch(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // A statement on `key` of weight `weight` (DecayClock::weight); shard and
  // backend: where it went (the latest wins: a MOVE KEY changes them).
  void add(uint64_t key, double weight, bool write, std::string_view shard, std::string_view backend);
  // Every count times `factor` (the clock moved its landmark).
  void scale(double factor);
  const std::vector<Entry>& entries() const { return entries_; }
  size_t capacity() const { return capacity_; }

 private:
  size_t smallest() const;

  size_t capacity_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, size_t> index_;  // key -> entries_ position
};

}  // namespace sp::proxy
