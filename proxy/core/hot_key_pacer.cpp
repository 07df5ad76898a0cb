#include "proxy/core/hot_key_pacer.hpp"

#include <algorithm>
#include <functional>

namespace sp::proxy {

void HotKeyPacer::configure(uint32_t max_per_second, std::chrono::milliseconds max_wait) {
  max_wait_ms_.store(static_cast<uint32_t>(std::max<int64_t>(0, max_wait.count())), std::memory_order_relaxed);
  rate_.store(max_per_second, std::memory_order_relaxed);
}

HotKeyPacer::Turn HotKeyPacer::reserve(std::string_view key, Clock::time_point now) {
  const uint32_t rate = rate_.load(std::memory_order_relaxed);
  if (rate == 0) return {now, false};
  const auto spacing = std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(1'000'000'000 / rate));
  const auto max_wait = std::chrono::milliseconds(max_wait_ms_.load(std::memory_order_relaxed));
  Stripe& s = stripes_[std::hash<std::string_view>{}(key) % kStripes];
  std::lock_guard lock(s.mutex);
  auto it = s.next.find(std::string(key));
  if (it == s.next.end()) {
    if (s.next.size() >= kKeysPerStripe && now >= s.next_sweep) {
      // At most one sweep per kSweepEvery: a flood of new keys costs no scan per write.
      std::erase_if(s.next, [now](const auto& kv) { return kv.second <= now; });
      s.next_sweep = now + kSweepEvery;
    }
    if (s.next.size() >= kKeysPerStripe) {
      untracked_.fetch_add(1, std::memory_order_relaxed);
      return {now, false};
    }
    s.next.emplace(std::string(key), now + spacing);
    return {now, false};
  }
  const Clock::time_point turn = std::max(now, it->second);
  if (turn - now > max_wait) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return {turn, true};
  }
  it->second = turn + spacing;
  return {turn, false};
}

void HotKeyPacer::noteWait(Clock::duration waited, bool interrupted) {
  (interrupted ? interrupted_ : paced_).fetch_add(1, std::memory_order_relaxed);
  wait_ns_.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()),
                     std::memory_order_relaxed);
}

HotKeyPaceStats HotKeyPacer::stats() const {
  HotKeyPaceStats out;
  out.paced = paced_.load(std::memory_order_relaxed);
  out.refused = refused_.load(std::memory_order_relaxed);
  out.interrupted = interrupted_.load(std::memory_order_relaxed);
  out.untracked = untracked_.load(std::memory_order_relaxed);
  out.wait_seconds_sum = static_cast<double>(wait_ns_.load(std::memory_order_relaxed)) / 1e9;
  return out;
}

size_t HotKeyPacer::keys() const {
  size_t n = 0;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s.mutex);
    n += s.next.size();
  }
  return n;
}

}  // namespace sp::proxy
