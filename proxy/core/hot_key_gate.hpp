// Hot-key write serialisation shared by all worker threads
// (overload.hot_key_concurrency / hot_key_max_queued / queue_timeout_ms;
// docs/availability.md, "Overload: hot keys"). Keys ("table:value") are
// spread over a few stripes, each a HotKeyQueue behind its own mutex, so
// writes to different keys rarely meet on a lock. A write beyond its key's
// limit waits on a timer of its own worker, woken on that worker's executor
// when a slot is granted to it (grant_waiters.hpp, shared with the
// per-backend budget), refused after overload.queue_timeout_ms (9148) or when
// overload.hot_key_max_queued writes wait for the key already (9149).
//
// Off (hot_key_concurrency 0) costs one atomic load per write.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/core/backend_admission.hpp"
#include "proxy/core/hot_key_queue.hpp"
#include "proxy/net/net.hpp"

namespace sp::conf {
struct Config;
}  // namespace sp::conf

namespace sp::proxy {

struct HotKeySettings {
  uint32_t concurrency = 4;                       // overload.hot_key_concurrency (0: off)
  uint32_t max_queued = 1000;                     // overload.hot_key_max_queued
  std::chrono::milliseconds queue_timeout{1000};  // overload.queue_timeout_ms
};
HotKeySettings hotKeySettings(const conf::Config& config);

// What the serialiser did since start (SHOW HOT KEYS' totals, the metrics endpoint).
struct HotKeyStats {
  uint32_t active = 0;    // writes holding a key's slot now (transactions included)
  uint32_t queued = 0;    // writes waiting now
  uint64_t admitted = 0;  // writes admitted while the serialiser was on
  uint64_t serialised = 0;        // of those, admitted after waiting
  uint64_t bypassed = 0;          // admitted past the queue (their transaction holds locks)
  uint64_t rejected_timeout = 0;  // 9148
  uint64_t rejected_full = 0;     // 9149
  uint64_t interrupted = 0;       // killed or disconnected while waiting
  double wait_seconds_sum = 0;    // every wait that ended
  uint64_t wait_count = 0;
};

class HotKeyGate;

// A write's slot of its key. Move-only; gives the slot back (or leaves the
// queue) when destroyed, so every path (error, KILL, disconnect) releases it.
class HotKeySlot {
 public:
  enum class State : uint8_t {
    kNone,         // empty: off, moved from, or released
    kAdmitted,     // holds a slot of the key
    kQueued,       // waits: HotKeyGate::wait()
    kTimedOut,     // refused: waited overload.queue_timeout_ms
    kFull,         // refused: overload.hot_key_max_queued wait for the key already
    kInterrupted,  // refused: killed while waiting
  };
  HotKeySlot() = default;
  HotKeySlot(HotKeySlot&& other) noexcept { *this = std::move(other); }
  HotKeySlot& operator=(HotKeySlot&& other) noexcept;
  HotKeySlot(const HotKeySlot&) = delete;
  HotKeySlot& operator=(const HotKeySlot&) = delete;
  ~HotKeySlot() { release(); }

  State state() const { return state_; }
  bool admitted() const { return state_ == State::kAdmitted; }
  bool refused() const { return state_ >= State::kTimedOut; }
  const std::string& key() const { return key_; }
  uint32_t limit() const { return limit_; }  // hot_key_concurrency when the write arrived
  std::chrono::milliseconds waited() const { return waited_; }
  void release();

 private:
  friend class HotKeyGate;
  struct Stripe;
  std::shared_ptr<Stripe> stripe_;
  HotKeyQueue::Ticket ticket_ = 0;
  State state_ = State::kNone;
  std::string key_;
  uint32_t limit_ = 0;
  std::chrono::milliseconds waited_{0};
  std::chrono::steady_clock::time_point since_{};
  std::chrono::milliseconds timeout_{0};
};

class HotKeyGate {
 public:
  HotKeyGate();
  ~HotKeyGate();
  HotKeyGate(const HotKeyGate&) = delete;
  HotKeyGate& operator=(const HotKeyGate&) = delete;

  // At start-up and after each RELOAD: a higher limit (or 0) admits waiting writes at once.
  void configure(HotKeySettings settings);
  HotKeySettings settings() const;
  bool enabled() const { return concurrency_.load(std::memory_order_relaxed) != 0; }

  // A write to `key`: admitted, queued (then co_await wait()) or refused
  // (kFull); kNone when the serialiser is off. `bypass`: admitted past the
  // queue and the limit (its session holds locks the key's holders may want).
  HotKeySlot enter(std::string_view key, bool bypass);
  // A queued slot's wait: it ends admitted, kTimedOut or kInterrupted
  // (`handle`: KILL ends it, the session's AdmissionWait).
  awaitable<void> wait(HotKeySlot& slot, AdmissionWait* handle = nullptr);

  HotKeyQueue::KeyLoad load(std::string_view key) const;
  HotKeyStats stats() const;
  size_t keys() const;  // keys held or waited for now (bounded: idle keys are forgotten)

 private:
  static constexpr size_t kStripes = 16;
  HotKeySlot::Stripe& stripeOf(std::string_view key) const;

  std::array<std::shared_ptr<HotKeySlot::Stripe>, kStripes> stripes_;
  std::atomic<uint32_t> concurrency_{0};
  std::atomic<uint32_t> max_queued_{1000};
  std::atomic<uint32_t> timeout_ms_{1000};
};

// The key slots one session's transaction keeps until it ends (COMMIT,
// ROLLBACK, an implicit commit, a lost connection, disconnect): writes of
// other sessions to those keys wait in the proxy, not on the row locks.
class HotKeyHolds {
 public:
  // Beyond this many keys a transaction's writes hold their slot for the
  // statement only (the map of one session stays small).
  static constexpr size_t kMaxKept = 256;

  bool holds(std::string_view key) const;
  bool empty() const { return slots_.empty(); }
  size_t size() const { return slots_.size(); }
  // Keeps an admitted slot for the transaction; false (the slot is left to
  // the caller) when kMaxKept are kept already.
  bool keep(HotKeySlot& slot);
  // After each command: outside a transaction every kept slot goes back.
  void settle(bool in_transaction) {
    if (!in_transaction) slots_.clear();
  }
  void clear() { slots_.clear(); }

 private:
  std::vector<HotKeySlot> slots_;
};

}  // namespace sp::proxy
