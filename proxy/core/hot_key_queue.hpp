// The per-key write serialiser (overload.hot_key_concurrency; docs/availability.md,
// "Overload: hot keys"): at most `concurrency` writes to one shard-key value
// (one conversation, one channel) in flight at once, the others waiting
// first come, first served in the proxy, so that a row-lock convoy waits
// here and not on the backend's connections and threads. A state machine
// without clocks, threads or I/O: HotKeyGate (hot_key_gate.hpp) drives it
// under its locks and does the waiting; unit tests drive it directly.
//
// Bounded: at most `max_queued` statements wait for one key (beyond:
// refused), and a key is forgotten as soon as nothing holds or waits for it,
// so the map holds only the keys written right now.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sp::proxy {

class HotKeyQueue {
 public:
  using Ticket = uint64_t;  // never 0

  struct Limits {
    uint32_t concurrency = 0;    // writes in flight per key; 0 = off (everything admitted, uncounted)
    uint32_t max_queued = 1000;  // writes waiting per key; beyond: refused
  };
  enum class Verdict : uint8_t {
    kAdmitted,  // holds a slot of the key: release(ticket) when done
    kQueued,    // waits: granted(ticket) once a slot is its, or withdraw(ticket)
    kFull,      // max_queued wait for this key already: refused (no ticket)
  };
  struct Result {
    Verdict verdict = Verdict::kFull;
    Ticket ticket = 0;
  };
  // One key's state now (SHOW HOT KEYS).
  struct KeyLoad {
    uint32_t active = 0;
    uint32_t waiting = 0;
  };

  HotKeyQueue() = default;
  explicit HotKeyQueue(Limits limits) : limits_(limits) {}

  // A write to `key`. `bypass`: admitted at once even over the limit and
  // ahead of the queue (still counted): its session holds locks that the
  // key's holders may wait for, so it must never wait behind them.
  Result admit(std::string_view key, bool bypass = false);
  // The slot of an admitted or granted ticket back; the tickets granted a
  // slot because of it (to be woken), oldest first.
  std::vector<Ticket> release(Ticket ticket);
  // A waiting ticket gives up (timeout, KILL, disconnect). False when it was
  // granted meanwhile: it holds a slot then, and the caller must release() it.
  bool withdraw(Ticket ticket);
  bool granted(Ticket ticket) const { return holders_.contains(ticket); }
  // New limits (a RELOAD): a higher concurrency grants waiting tickets at
  // once (returned); a lower one lets the writes in flight finish.
  std::vector<Ticket> setLimits(Limits limits);
  const Limits& limits() const { return limits_; }

  KeyLoad load(std::string_view key) const;
  size_t keys() const { return keys_.size(); }  // keys held or waited for now
  uint32_t active() const { return static_cast<uint32_t>(holders_.size()); }
  uint32_t queued() const { return static_cast<uint32_t>(waiting_.size()); }

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Key {
    uint32_t active = 0;
    std::deque<Ticket> waiting;  // arrival order
  };
  using Keys = std::unordered_map<std::string, Key, NameHash, std::equal_to<>>;

  // Grants the key's free slots to its oldest waiters (appended to `granted`).
  void grantFree(Keys::iterator key, std::vector<Ticket>& granted);
  void forgetIfIdle(Keys::iterator key);

  Limits limits_;
  Ticket next_ticket_ = 1;
  Keys keys_;
  std::unordered_map<Ticket, std::string> holders_;  // ticket -> its key
  std::unordered_map<Ticket, std::string> waiting_;
};

}  // namespace sp::proxy
