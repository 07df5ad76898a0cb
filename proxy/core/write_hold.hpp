// The write hold of an online move's cut-over (docs/operations.md, "Online
// moves"). While a move copies and catches up, its keys are *watched*: every
// write to them that passes the gate holds a ticket until it is answered
// (autocommit) or until its transaction ends, so the move can tell when no
// write to its keys is on its way to the source. At the cut-over the move
// *holds* its keys: new writes to them wait here (bounded in time and in
// number: past either bound they are refused with 9135 / 9136), the move
// waits for the tickets to drain, lets the catch-up reach the source's
// binlog end, publishes the new map, and releases: the waiting writes
// re-plan against the new map. A cut-over that cannot drain within the bound
// releases without switching; the writes then go to the source as before.
//
// Shared by every worker thread (one per process, in ProxyContext): a mutex
// guards the state, waiters are woken on their own executors.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proxy/net/net.hpp"
#include "routing/map/move_plan.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

struct WriteHoldLimits {
  std::chrono::milliseconds timeout{1000};  // moves.hold_timeout_ms: longest wait of one write
  uint32_t max_waiting = 10000;             // moves.hold_max_waiting: writes waiting at once
};

// What a session does with its write.
enum class Admission : uint8_t {
  kPass,     // run it as planned
  kReplan,   // the map changed while it waited: plan again (against the new map)
  kTimeout,  // waited longer than the bound: refuse with 9135
  kFull,     // too many writes waiting: refuse with 9136
  kUnsynchronised,  // a fleet fence holds the keys and this proxy lost etcd: refuse with 9138
};

// The keys a write plan touches, as the hold sees them.
struct WriteTouch {
  std::string table;                      // logical table of the plan
  std::span<const uint64_t> key_values;   // shard-key values found (empty: unknown)
  std::vector<std::string> physical_tables;  // the targets' physical tables
};

class WriteHold {
 public:
  struct Watch;   // one move's keys and state
  struct Waiter;  // one waiting write

  WriteHold();
  ~WriteHold();
  WriteHold(const WriteHold&) = delete;
  WriteHold& operator=(const WriteHold&) = delete;

  // A move's keys: from its copy until it ends. `source_table` catches writes
  // whose keys the planner did not find (a physical table named directly).
  uint64_t watch(routing::MovingKeys keys, std::string source_table);
  void unwatch(uint64_t id);  // also releases waiting writes (they re-plan)

  // Cut-over. hold(): new writes to the keys wait; inFlight(): tickets not yet
  // given back; release(): the waiting writes go on (switched: they re-plan).
  void hold(uint64_t id);
  uint32_t inFlight(uint64_t id) const;
  void release(uint64_t id);
  // After the new map (version `version`) is published: writes planned with
  // an older map re-plan, newer ones pass without a ticket. The watch stays as
  // a marker until unwatch() (a transaction keeps its map: a write in it that
  // was planned before the switch must still be caught).
  void switched(uint64_t id, uint64_t version);

  // Transactions open since before watch `id` began: they may hold writes
  // to its keys taken before any ticket existed, so the cut-over waits for them.
  uint32_t olderTransactions(uint64_t id) const;
  // Writes admitted before watch `id` began and not yet settled (answered,
  // or their transaction ended): they took no ticket, so a watch created at
  // the cut-over itself (a fleet fence on another proxy) waits for them.
  uint32_t olderWrites(uint64_t id) const;
  // in-flight, older writes and older transactions all ended.
  bool drained(uint64_t id) const;
  // A fleet fence whose proxy lost etcd: its writes are refused at once
  // (kUnsynchronised) until `refusing` is cleared.
  void refuse(uint64_t id, bool refusing);
  // A new epoch (a marker for openTransactionsBefore), and the transactions
  // opened by commands that began before it.
  uint64_t advanceEpoch();
  uint32_t openTransactionsBefore(uint64_t epoch) const;

  void setLimits(WriteHoldLimits limits);
  WriteHoldLimits limits() const;
  uint32_t waiting() const;
  bool empty() const;  // no watch: the sessions' fast path

  // ---- the session's side ----

  // The watches a write touches (ids); empty for most writes.
  std::vector<uint64_t> touched(const WriteTouch& touch) const;
  // Takes a ticket on `id`, waiting first while it is held. `map_version`:
  // the map the write was planned with; a plan older than the switch re-plans.
  struct Admitted {
    Admission admission = Admission::kPass;
    bool ticket = false;  // give it back with giveBack(id)
  };
  // `open_write`: the epoch openWrite() gave the session's write; it does not
  // count as older while it waits here (it is not on its way to a backend,
  // and a drain waiting for it would wait for its own hold).
  awaitable<Admitted> admit(uint64_t id, uint64_t map_version, std::optional<uint64_t> open_write = std::nullopt);
  void giveBack(uint64_t id);  // the ticket of admit()
  // Open transactions by the epoch (watches started so far) at the start of
  // the statement that opened them.
  uint64_t epoch() const { return epoch_.load(); }
  void transactionOpened(uint64_t epoch);
  void transactionClosed(uint64_t epoch);
  // A write admitted (registered under the mutex, so either it counts as
  // older than a watch or it sees the watch); closed when settled.
  uint64_t openWrite();
  void closeWrite(uint64_t epoch);

 private:
  Watch* find(uint64_t id);
  const Watch* find(uint64_t id) const;
  void wake(std::vector<std::shared_ptr<Waiter>>& waiters);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Watch>> watches_;
  uint64_t next_id_ = 1;
  uint32_t waiting_ = 0;
  std::atomic<size_t> count_{0};  // watches_.size(), read without the mutex
  std::atomic<uint64_t> epoch_{0};  // watch() calls so far
  std::vector<std::pair<uint64_t, uint32_t>> open_transactions_;  // (epoch, count), few entries
  std::vector<std::pair<uint64_t, uint32_t>> open_writes_;        // (epoch, count), few entries
  WriteHoldLimits limits_;
};

// One session's tickets: taken for writes to watched keys, given back when
// the statement is answered outside a transaction or when the transaction
// ends (settle after every command). Lives in the session.
class SessionWriteGate {
 public:
  explicit SessionWriteGate(WriteHold& hold) : hold_(hold) {}
  ~SessionWriteGate() { settle(false); }
  SessionWriteGate(const SessionWriteGate&) = delete;
  SessionWriteGate& operator=(const SessionWriteGate&) = delete;

  // For a write plan: kPass (tickets taken as needed), kReplan, or a refusal.
  awaitable<Admission> admit(const routing::Plan& plan, uint64_t map_version);
  // Before every command: the hold's epoch, for settle().
  void beginCommand() { command_epoch_ = hold_.epoch(); }
  // After every command: gives the tickets back unless a transaction is
  // open, and counts the session's open transaction with the hold.
  void settle(bool in_transaction);
  size_t tickets() const { return tickets_.size(); }

 private:
  WriteHold& hold_;
  std::vector<uint64_t> tickets_;
  uint64_t command_epoch_ = 0;
  std::optional<uint64_t> transaction_epoch_;  // counted in the hold while set
  std::optional<uint64_t> write_epoch_;        // a write counted in the hold (openWrite) while set
};

// The client's ERR for kTimeout / kFull / kUnsynchronised (code, SQLSTATE, message).
struct HoldRefusal {
  uint16_t code = 0;
  std::string message;
};
HoldRefusal holdRefusal(Admission admission, const WriteHoldLimits& limits);

}  // namespace sp::proxy
