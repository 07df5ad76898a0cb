// Writes to one shard-key value spaced in time (overload.hot_key_max_per_second;
// docs/availability.md, "Overload: hot keys"). Serialising a hot key
// (hot_key_gate.hpp) keeps its row-lock convoy out of the backend, but a key
// written flat out still takes the backend's CPU from every other tenant of
// its shard; a rate is what bounds that. Each key value has the earliest time
// its next write may start (a virtual schedule, GCRA): a write arriving
// before it waits until then, and the key's time moves 1/rate further. A
// write whose turn is more than overload.queue_timeout_ms away is refused at
// once (9147) instead of waiting in vain; nothing reaches the backend.
//
// Keys are spread over stripes, each a map behind its own mutex holding only
// keys whose next time is still ahead (the others are swept when a stripe
// fills, at most every 10 ms): memory and time stay bounded whatever the
// number of keys; a new key when a stripe is full of hot ones is not paced
// (counted as untracked).
//
// Off (0, the default) costs one atomic load per write.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sp::proxy {

struct HotKeyPaceStats {
  uint64_t paced = 0;            // writes that waited for their turn
  uint64_t refused = 0;          // 9147: their turn was too far away
  uint64_t interrupted = 0;      // killed or disconnected while waiting
  uint64_t untracked = 0;        // not paced: their stripe was full of hot keys
  double wait_seconds_sum = 0;   // every pacing wait that ended
};

class HotKeyPacer {
 public:
  using Clock = std::chrono::steady_clock;

  // At start-up and after each RELOAD (0: off; a new rate applies to the next
  // write of each key).
  void configure(uint32_t max_per_second, std::chrono::milliseconds max_wait);
  bool enabled() const { return rate_.load(std::memory_order_relaxed) != 0; }
  uint32_t maxPerSecond() const { return rate_.load(std::memory_order_relaxed); }
  std::chrono::milliseconds maxWait() const { return std::chrono::milliseconds(max_wait_ms_.load()); }

  struct Turn {
    Clock::time_point at;  // when the write may start (<= now: at once)
    bool refused = false;  // its turn is further than max_wait away: not taken
  };
  // Takes the next turn of `key` for a write arriving `now`.
  Turn reserve(std::string_view key, Clock::time_point now);
  // A wait for a turn ended (slept until it, or was interrupted).
  void noteWait(Clock::duration waited, bool interrupted);

  HotKeyPaceStats stats() const;
  size_t keys() const;  // keys whose next turn is still ahead (or not swept yet)

  static constexpr size_t kStripes = 16;
  static constexpr size_t kKeysPerStripe = 4096;

 private:
  struct Stripe {
    mutable std::mutex mutex;
    std::unordered_map<std::string, Clock::time_point> next;
    Clock::time_point next_sweep{};
  };
  static constexpr auto kSweepEvery = std::chrono::milliseconds(10);
  std::array<Stripe, kStripes> stripes_;
  std::atomic<uint32_t> rate_{0};
  std::atomic<uint32_t> max_wait_ms_{1000};
  std::atomic<uint64_t> paced_{0}, refused_{0}, interrupted_{0}, untracked_{0};
  std::atomic<uint64_t> wait_ns_{0};
};

}  // namespace sp::proxy
