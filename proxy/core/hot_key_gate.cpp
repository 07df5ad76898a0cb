#include "proxy/core/hot_key_gate.hpp"

#include <algorithm>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "conf/config.hpp"

namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

struct HotKeySlot::Stripe {
  std::mutex mutex;  // guards everything here
  HotKeyQueue queue;
  GrantWaiters waiters;
  HotKeyStats counters;

  // Wakes the waiters of `granted` (called under the mutex).
  void wake(const std::vector<HotKeyQueue::Ticket>& granted) { waiters.wake(granted); }
};

HotKeySlot& HotKeySlot::operator=(HotKeySlot&& other) noexcept {
  if (this == &other) return *this;
  release();
  stripe_ = std::move(other.stripe_);
  ticket_ = other.ticket_;
  state_ = other.state_;
  key_ = std::move(other.key_);
  limit_ = other.limit_;
  waited_ = other.waited_;
  since_ = other.since_;
  timeout_ = other.timeout_;
  other.state_ = State::kNone;
  other.ticket_ = 0;
  return *this;
}

void HotKeySlot::release() {
  const State state = state_;
  state_ = State::kNone;
  if (stripe_ && (state == State::kAdmitted || state == State::kQueued)) {
    std::lock_guard lock(stripe_->mutex);
    bool holds = state == State::kAdmitted;
    if (state == State::kQueued) {
      // Its waiting coroutine is gone (the session ended while it waited).
      stripe_->waiters.forget(ticket_);
      holds = !stripe_->queue.withdraw(ticket_);
      ++stripe_->counters.interrupted;
    }
    if (holds) stripe_->wake(stripe_->queue.release(ticket_));
  }
  stripe_.reset();
  ticket_ = 0;
}

HotKeyGate::HotKeyGate() {
  for (auto& s : stripes_) s = std::make_shared<HotKeySlot::Stripe>();
}
HotKeyGate::~HotKeyGate() = default;

HotKeySlot::Stripe& HotKeyGate::stripeOf(std::string_view key) const {
  return *stripes_[std::hash<std::string_view>{}(key) % kStripes];
}

void HotKeyGate::configure(HotKeySettings settings) {
  concurrency_.store(settings.concurrency);
  max_queued_.store(settings.max_queued);
  timeout_ms_.store(static_cast<uint32_t>(settings.queue_timeout.count()));
  for (auto& s : stripes_) {
    std::lock_guard lock(s->mutex);
    s->wake(s->queue.setLimits({settings.concurrency, settings.max_queued}));
  }
}

HotKeySettings HotKeyGate::settings() const {
  return {concurrency_.load(), max_queued_.load(), std::chrono::milliseconds(timeout_ms_.load())};
}

HotKeySlot HotKeyGate::enter(std::string_view key, bool bypass) {
  HotKeySlot slot;
  slot.limit_ = concurrency_.load(std::memory_order_relaxed);
  if (slot.limit_ == 0) return slot;  // off: nothing counted, nothing to release
  auto& stripe = stripes_[std::hash<std::string_view>{}(key) % kStripes];
  slot.stripe_ = stripe;
  slot.key_ = std::string(key);
  std::lock_guard lock(stripe->mutex);
  auto r = stripe->queue.admit(key, bypass);
  slot.ticket_ = r.ticket;
  switch (r.verdict) {
    case HotKeyQueue::Verdict::kAdmitted:
      ++stripe->counters.admitted;
      if (bypass) ++stripe->counters.bypassed;
      slot.state_ = HotKeySlot::State::kAdmitted;
      break;
    case HotKeyQueue::Verdict::kQueued:
      slot.state_ = HotKeySlot::State::kQueued;
      slot.since_ = Clock::now();
      slot.timeout_ = std::chrono::milliseconds(timeout_ms_.load());
      break;
    case HotKeyQueue::Verdict::kFull:
      ++stripe->counters.rejected_full;
      slot.state_ = HotKeySlot::State::kFull;
      slot.stripe_.reset();
      break;
  }
  return slot;
}

awaitable<void> HotKeyGate::wait(HotKeySlot& slot, AdmissionWait* handle) {
  if (slot.state_ != HotKeySlot::State::kQueued) co_return;
  auto stripe = slot.stripe_;  // alive while it waits
  const auto ticket = slot.ticket_;
  co_await stripe->waiters.wait(stripe->mutex, ticket, slot.since_ + slot.timeout_,
                                [&] { return stripe->queue.granted(ticket); }, handle);
  std::lock_guard lock(stripe->mutex);
  slot.waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - slot.since_);
  auto& c = stripe->counters;
  c.wait_seconds_sum += std::chrono::duration<double>(slot.waited_).count();
  ++c.wait_count;
  const bool interrupted = handle && handle->interrupted();
  const bool holds = !stripe->queue.withdraw(slot.ticket_);  // false: it still waited, and is gone now
  if (holds && !interrupted) {
    ++c.admitted;
    ++c.serialised;
    slot.state_ = HotKeySlot::State::kAdmitted;
    co_return;
  }
  if (holds) stripe->wake(stripe->queue.release(slot.ticket_));
  if (interrupted) ++c.interrupted;
  else ++c.rejected_timeout;
  slot.state_ = interrupted ? HotKeySlot::State::kInterrupted : HotKeySlot::State::kTimedOut;
  slot.ticket_ = 0;
  slot.stripe_.reset();
}

HotKeyQueue::KeyLoad HotKeyGate::load(std::string_view key) const {
  auto& stripe = stripeOf(key);
  std::lock_guard lock(stripe.mutex);
  return stripe.queue.load(key);
}

HotKeyStats HotKeyGate::stats() const {
  HotKeyStats out;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s->mutex);
    const auto& c = s->counters;
    out.active += s->queue.active();
    out.queued += s->queue.queued();
    out.admitted += c.admitted;
    out.serialised += c.serialised;
    out.bypassed += c.bypassed;
    out.rejected_timeout += c.rejected_timeout;
    out.rejected_full += c.rejected_full;
    out.interrupted += c.interrupted;
    out.wait_seconds_sum += c.wait_seconds_sum;
    out.wait_count += c.wait_count;
  }
  return out;
}

size_t HotKeyGate::keys() const {
  size_t n = 0;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s->mutex);
    n += s->queue.keys();
  }
  return n;
}

bool HotKeyHolds::holds(std::string_view key) const {
  return std::any_of(slots_.begin(), slots_.end(), [&](const HotKeySlot& s) { return s.admitted() && s.key() == key; });
}

bool HotKeyHolds::keep(HotKeySlot& slot) {
  if (!slot.admitted() || slots_.size() >= kMaxKept) return false;
  slots_.push_back(std::move(slot));
  return true;
}

HotKeySettings hotKeySettings(const conf::Config& config) {
  return {config.overload.hot_key_concurrency, config.overload.hot_key_max_queued,
          std::chrono::milliseconds(config.overload.queue_timeout_ms)};
}

}  // namespace sp::proxy
