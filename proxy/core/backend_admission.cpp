#include "proxy/core/backend_admission.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "conf/config.hpp"

namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct AdmissionSlot::Entry {
  std::string server;
  std::atomic<uint32_t> budget{0};      // read without the mutex on the fast path
  std::atomic<uint32_t> unbudgeted{0};  // statements in flight admitted without a budget
  std::atomic<uint64_t> unbudgeted_total{0};
  std::mutex mutex;  // guards what follows
  AdmissionQueue queue;
  GrantWaiters waiters;
  AdmissionStats counters;

  // Wakes the waiters of `granted` (called under the mutex).
  void wake(const std::vector<AdmissionQueue::Ticket>& granted) { waiters.wake(granted); }
  void noteWait(std::chrono::milliseconds waited) {
    const double s = std::chrono::duration<double>(waited).count();
    counters.wait_seconds_sum += s;
    ++counters.wait_count;
    counters.wait_seconds_max = std::max(counters.wait_seconds_max, s);
  }
};

AdmissionSlot& AdmissionSlot::operator=(AdmissionSlot&& other) noexcept {
  if (this == &other) return *this;
  release();
  entry_ = std::move(other.entry_);
  ticket_ = other.ticket_;
  state_ = other.state_;
  budget_ = other.budget_;
  waited_ = other.waited_;
  since_ = other.since_;
  timeout_ = other.timeout_;
  other.state_ = State::kNone;
  other.ticket_ = 0;
  return *this;
}

void AdmissionSlot::release() {
  const State state = state_;
  state_ = State::kNone;
  if (!entry_ || (state != State::kAdmitted && state != State::kQueued)) {
    entry_.reset();
    return;
  }
  if (ticket_ == 0) {
    entry_->unbudgeted.fetch_sub(1, std::memory_order_relaxed);
  } else {
    std::lock_guard lock(entry_->mutex);
    bool holds = state == State::kAdmitted;
    if (state == State::kQueued) {
      // Its waiting coroutine is gone (the session ended while it waited).
      entry_->waiters.forget(ticket_);
      holds = !entry_->queue.withdraw(ticket_);
      ++entry_->counters.interrupted;
    }
    if (holds) entry_->wake(entry_->queue.release(ticket_));
  }
  entry_.reset();
  ticket_ = 0;
}

BackendAdmissions::BackendAdmissions() = default;
BackendAdmissions::~BackendAdmissions() = default;

std::shared_ptr<AdmissionSlot::Entry> BackendAdmissions::entryOf(std::string_view server) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = entries_.find(server); it != entries_.end()) return it->second;
  }
  std::unique_lock lock(mutex_);
  auto& entry = entries_[std::string(server)];
  if (!entry) {
    entry = std::make_shared<AdmissionSlot::Entry>();
    entry->server = std::string(server);
    entry->queue.setLimits({0, max_queued_.load()});
  }
  return entry;
}

void BackendAdmissions::configure(const std::vector<std::pair<std::string, uint32_t>>& budgets,
                                  OverloadSettings settings) {
  timeout_ms_.store(static_cast<uint32_t>(settings.queue_timeout.count()));
  any_budget_.store(std::any_of(budgets.begin(), budgets.end(), [](const auto& b) { return b.second > 0; }));
  max_queued_.store(settings.max_queued);
  std::vector<std::shared_ptr<AdmissionSlot::Entry>> all;
  for (const auto& [server, budget] : budgets) entryOf(server);
  {
    std::shared_lock lock(mutex_);
    for (const auto& [name, entry] : entries_) all.push_back(entry);
  }
  for (const auto& entry : all) {
    uint32_t budget = 0;
    for (const auto& [server, b] : budgets) {
      if (server == entry->server) budget = b;
    }
    std::lock_guard lock(entry->mutex);
    entry->budget.store(budget);
    // Statements admitted before while there was no budget are not in the
    // queue's count: they finish uncounted (a reload overshoots at most by them).
    entry->wake(entry->queue.setLimits({budget, settings.max_queued}));
  }
}

OverloadSettings BackendAdmissions::settings() const {
  return {std::chrono::milliseconds(timeout_ms_.load()), max_queued_.load()};
}

AdmissionSlot BackendAdmissions::enter(std::string_view server, std::string_view user, std::string_view key,
                                       bool bypass) {
  AdmissionSlot slot;
  if (!any_budget_.load(std::memory_order_relaxed)) {
    slot.state_ = AdmissionSlot::State::kAdmitted;
    return slot;
  }
  slot.entry_ = entryOf(server);
  auto& e = *slot.entry_;
  slot.budget_ = e.budget.load(std::memory_order_relaxed);
  if (slot.budget_ == 0) {
    e.unbudgeted.fetch_add(1, std::memory_order_relaxed);
    e.unbudgeted_total.fetch_add(1, std::memory_order_relaxed);
    slot.state_ = AdmissionSlot::State::kAdmitted;
    return slot;
  }
  std::lock_guard lock(e.mutex);
  auto r = e.queue.admit(user, key, bypass);
  slot.ticket_ = r.ticket;
  switch (r.verdict) {
    case AdmissionQueue::Verdict::kAdmitted:
      ++e.counters.admitted;
      if (bypass) ++e.counters.bypassed;
      slot.state_ = AdmissionSlot::State::kAdmitted;
      break;
    case AdmissionQueue::Verdict::kQueued:
      slot.state_ = AdmissionSlot::State::kQueued;
      slot.since_ = Clock::now();
      slot.timeout_ = std::chrono::milliseconds(timeout_ms_.load());
      break;
    case AdmissionQueue::Verdict::kFull:
      ++e.counters.rejected_full;
      slot.state_ = AdmissionSlot::State::kFull;
      break;
  }
  return slot;
}

awaitable<void> BackendAdmissions::wait(AdmissionSlot& slot, AdmissionWait* handle) {
  if (slot.state_ != AdmissionSlot::State::kQueued) co_return;
  auto entry = slot.entry_;  // alive while it waits
  auto& e = *entry;
  const auto ticket = slot.ticket_;
  co_await e.waiters.wait(e.mutex, ticket, slot.since_ + slot.timeout_, [&] { return e.queue.granted(ticket); },
                          handle);
  std::lock_guard lock(e.mutex);
  slot.waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - slot.since_);
  e.noteWait(slot.waited_);
  const bool interrupted = handle && handle->interrupted();
  bool holds = !e.queue.withdraw(slot.ticket_);  // false: it was still waiting, and is gone now
  if (holds && !interrupted) {
    ++e.counters.admitted;
    ++e.counters.waited;
    slot.state_ = AdmissionSlot::State::kAdmitted;
    co_return;
  }
  if (holds) e.wake(e.queue.release(slot.ticket_));
  if (interrupted) ++e.counters.interrupted;
  else ++e.counters.rejected_timeout;
  slot.state_ = interrupted ? AdmissionSlot::State::kInterrupted : AdmissionSlot::State::kTimedOut;
  slot.ticket_ = 0;
  slot.entry_.reset();
}

std::vector<AdmissionStats> BackendAdmissions::stats() const {
  std::vector<std::shared_ptr<AdmissionSlot::Entry>> all;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [name, entry] : entries_) all.push_back(entry);
  }
  std::vector<AdmissionStats> out;
  for (const auto& entry : all) {
    std::lock_guard lock(entry->mutex);
    AdmissionStats s = entry->counters;
    s.server = entry->server;
    s.budget = entry->budget.load();
    s.active = entry->queue.active() + entry->unbudgeted.load();
    s.queued = entry->queue.queued();
    s.admitted += entry->unbudgeted_total.load();
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, uint32_t>> serverBudgets(const conf::Config& config) {
  std::vector<std::pair<std::string, uint32_t>> budgets;
  for (const auto& b : config.backends) {
    budgets.emplace_back(b.name, b.max_active_statements);
    for (const auto& r : b.replicas) budgets.emplace_back(r.name, r.max_active_statements.value_or(b.max_active_statements));
  }
  return budgets;
}

OverloadSettings overloadSettings(const conf::Config& config) {
  return {std::chrono::milliseconds(config.overload.queue_timeout_ms), config.overload.max_queued_per_backend};
}

}  // namespace sp::proxy
