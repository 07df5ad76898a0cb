// Every server's concurrency budget, shared by all worker threads
// (backends[].max_active_statements, overload:; docs/availability.md,
// "Overload: per-backend budget"). One AdmissionQueue per server behind a
// mutex; a statement beyond the budget waits on a timer of its own worker,
// woken on that worker's executor when a slot is granted to it
// (grant_waiters.hpp), refused after overload.queue_timeout_ms (9145) or when
// overload.max_queued_per_backend statements wait already (9146).
//
// The budget counts statements in flight: a slot is taken before the
// statement borrows its connection and given back when its answer has been
// read (AdmissionSlot releases on every path, its destructor included). A
// server without a budget (0, the default) only counts its statements, with
// one atomic and no lock.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/core/admission_queue.hpp"
#include "proxy/core/grant_waiters.hpp"
#include "proxy/net/net.hpp"

namespace sp::conf {
struct Config;
}  // namespace sp::conf

namespace sp::proxy {

struct OverloadSettings {
  std::chrono::milliseconds queue_timeout{1000};  // overload.queue_timeout_ms
  uint32_t max_queued = 1000;                     // overload.max_queued_per_backend
};

// One server's budget and what it did (SHOW OVERLOAD, the metrics endpoint).
struct AdmissionStats {
  std::string server;
  uint32_t budget = 0;    // 0: none
  uint32_t active = 0;    // statements in flight now
  uint32_t queued = 0;    // statements waiting now
  uint64_t admitted = 0;  // statements admitted, at once or after a wait
  uint64_t waited = 0;    // of those, admitted after waiting
  uint64_t bypassed = 0;  // admitted past the queue (their transaction holds locks here)
  uint64_t rejected_timeout = 0;  // 9145
  uint64_t rejected_full = 0;     // 9146
  uint64_t interrupted = 0;       // killed or disconnected while waiting
  double wait_seconds_sum = 0;    // every wait that ended (admitted or not)
  uint64_t wait_count = 0;
  double wait_seconds_max = 0;
};

class BackendAdmissions;

// A statement's place in one server's budget. Move-only; gives the slot back
// (or leaves the queue) when destroyed.
class AdmissionSlot {
 public:
  enum class State : uint8_t {
    kNone,         // empty (moved from, or released)
    kAdmitted,     // holds a slot
    kQueued,       // waits: BackendAdmissions::wait()
    kTimedOut,     // refused: waited overload.queue_timeout_ms
    kFull,         // refused: overload.max_queued_per_backend wait already
    kInterrupted,  // refused: killed while waiting
  };
  AdmissionSlot() = default;
  AdmissionSlot(AdmissionSlot&& other) noexcept { *this = std::move(other); }
  AdmissionSlot& operator=(AdmissionSlot&& other) noexcept;
  AdmissionSlot(const AdmissionSlot&) = delete;
  AdmissionSlot& operator=(const AdmissionSlot&) = delete;
  ~AdmissionSlot() { release(); }

  State state() const { return state_; }
  bool admitted() const { return state_ == State::kAdmitted; }
  bool refused() const { return state_ >= State::kTimedOut; }
  // The server's budget when the statement arrived, and how long it waited.
  uint32_t budget() const { return budget_; }
  std::chrono::milliseconds waited() const { return waited_; }
  void release();

 private:
  friend class BackendAdmissions;
  struct Entry;
  std::shared_ptr<Entry> entry_;
  AdmissionQueue::Ticket ticket_ = 0;  // 0: counted without a budget
  State state_ = State::kNone;
  uint32_t budget_ = 0;
  std::chrono::milliseconds waited_{0};
  std::chrono::steady_clock::time_point since_{};
  std::chrono::milliseconds timeout_{0};
};

class BackendAdmissions {
 public:
  BackendAdmissions();
  ~BackendAdmissions();
  BackendAdmissions(const BackendAdmissions&) = delete;
  BackendAdmissions& operator=(const BackendAdmissions&) = delete;

  // Budgets by server name (servers not listed keep no budget) and the
  // queue's bounds. At start-up and after each RELOAD; a larger budget
  // admits waiting statements at once.
  void configure(const std::vector<std::pair<std::string, uint32_t>>& budgets, OverloadSettings settings);
  OverloadSettings settings() const;
  bool anyBudget() const { return any_budget_.load(std::memory_order_relaxed); }

  // A statement arriving for `server`: admitted, queued (then co_await
  // wait()) or refused (kFull). `bypass`: admitted past the queue and the
  // budget (a statement of a transaction holding locks on this server).
  AdmissionSlot enter(std::string_view server, std::string_view user, std::string_view key, bool bypass);
  // A queued slot's wait: it ends admitted, kTimedOut or kInterrupted.
  awaitable<void> wait(AdmissionSlot& slot, AdmissionWait* handle = nullptr);

  // Every server with a budget, or that ever had one, by name.
  std::vector<AdmissionStats> stats() const;

 private:
  std::shared_ptr<AdmissionSlot::Entry> entryOf(std::string_view server);

  mutable std::shared_mutex mutex_;
  std::map<std::string, std::shared_ptr<AdmissionSlot::Entry>, std::less<>> entries_;
  // No server has a budget (the default): statements pass without touching
  // any shared counter, so the budget costs nothing per statement until used.
  std::atomic<bool> any_budget_{false};
  std::atomic<uint32_t> timeout_ms_{1000};
  std::atomic<uint32_t> max_queued_{1000};
};

// Each server's budget from the configuration: every backend's
// max_active_statements, and each replica's own or else its backend's.
std::vector<std::pair<std::string, uint32_t>> serverBudgets(const conf::Config& config);
OverloadSettings overloadSettings(const conf::Config& config);

}  // namespace sp::proxy
