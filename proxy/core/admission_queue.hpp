// The fair queue in front of one server's concurrency budget
// (backends[].max_active_statements; docs/availability.md, "Overload:
// per-backend budget"). A state machine without clocks, threads or I/O:
// BackendAdmissions (backend_admission.hpp) drives it under its mutex and
// does the waiting; unit tests drive it directly.
//
// A statement holds a *slot* while it is in flight. Beyond the budget it
// waits, in a sub-queue of its (user, key) pair: key is the statement's shard
// key (one conversation) or empty when it has none. A freed slot goes to the
// sub-queue whose user and key hold the fewest slots now (the larger of the
// two counts, then their sum; a statement without a key counts its user
// only), ties to the one whose user, then key, was served least recently
// (round robin), then to the one whose head waited longest. So while others
// wait, a flooding user or a hot key gets no more of the freed slots than anyone else waiting, and when
// nobody else waits it gets them all (no slot is left idle).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <tuple>
#include <utility>
#include <vector>

namespace sp::proxy {

class AdmissionQueue {
 public:
  using Ticket = uint64_t;  // never 0

  struct Limits {
    uint32_t budget = 0;        // slots; 0 = no budget (everything is admitted at once)
    uint32_t max_queued = 1000; // statements waiting at once; beyond: refused
  };
  enum class Verdict : uint8_t {
    kAdmitted,  // holds a slot now: release(ticket) when answered
    kQueued,    // waits: granted(ticket) once a slot is its, or withdraw(ticket)
    kFull,      // max_queued statements wait already: refused (no ticket)
  };
  struct Result {
    Verdict verdict = Verdict::kFull;
    Ticket ticket = 0;
  };

  AdmissionQueue() = default;
  explicit AdmissionQueue(Limits limits) : limits_(limits) {}

  // A statement of `user` on `key`. `bypass`: admitted at once even over the
  // budget and ahead of the queue (it is counted all the same): a statement
  // of a transaction that holds locks on this server must never wait behind
  // statements that may wait for those locks.
  Result admit(std::string_view user, std::string_view key, bool bypass = false);
  // The slot of an admitted or granted ticket back; the tickets granted a
  // slot because of it (to be woken), in grant order.
  std::vector<Ticket> release(Ticket ticket);
  // A waiting ticket gives up (its wait timed out, its statement was killed,
  // its session ended). False when it was granted meanwhile: it holds a slot
  // then, and the caller must release() it.
  bool withdraw(Ticket ticket);
  bool granted(Ticket ticket) const { return holders_.contains(ticket); }
  // New limits (a reload): a larger budget grants waiting tickets at once
  // (returned); a smaller one lets the statements in flight finish.
  std::vector<Ticket> setLimits(Limits limits);
  const Limits& limits() const { return limits_; }

  uint32_t active() const { return static_cast<uint32_t>(holders_.size()); }
  uint32_t queued() const { return static_cast<uint32_t>(waiting_.size()); }
  // Slots held now by one user / one key (tests, SHOW OVERLOAD).
  uint32_t activeOfUser(std::string_view user) const { return activeOf(users_, user); }
  uint32_t activeOfKey(std::string_view key) const { return activeOf(keys_, key); }

 private:
  using Pair = std::pair<std::string, std::string>;  // (user, key)
  struct Waiting {
    Ticket ticket = 0;
    uint64_t order = 0;  // arrival: ties go to the oldest head
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // One user's or one key's part: kept while it holds or waits for a slot.
  struct Share {
    uint32_t active = 0;
    uint32_t waiting = 0;
    uint64_t last_grant = 0;  // grant_seq_ of its latest slot
  };
  using Shares = std::unordered_map<std::string, Share, NameHash, std::equal_to<>>;

  bool hasFreeSlot() const { return limits_.budget == 0 || holders_.size() < limits_.budget; }
  void hold(Ticket ticket, const Pair& who);
  // Grants free slots to the fairest waiting tickets (appended to `granted`).
  void grantFree(std::vector<Ticket>& granted);
  static uint32_t activeOf(const Shares& shares, std::string_view name);
  static uint64_t lastGrantOf(const Shares& shares, std::string_view name);
  // Adds `active` / `waiting` to a share (negative: takes away); forgets it when idle.
  static void change(Shares& shares, const std::string& name, int active, int waiting, uint64_t grant);

  Limits limits_;
  Ticket next_ticket_ = 1;
  uint64_t next_order_ = 1;
  std::unordered_map<Ticket, Pair> holders_;           // tickets holding a slot
  std::unordered_map<Ticket, Pair> waiting_;           // tickets waiting, by their sub-queue
  std::map<Pair, std::deque<Waiting>> queues_;         // sub-queues, never empty
  uint64_t grant_seq_ = 0;
  Shares users_;
  Shares keys_;  // keyed statements only
};

}  // namespace sp::proxy
