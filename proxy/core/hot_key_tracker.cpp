#include "proxy/core/hot_key_tracker.hpp"

#include <algorithm>

namespace sp::proxy {

HotKeyTracker::HotKeyTracker(size_t tracked) : tracked_(tracked) {}

void HotKeyTracker::configure(size_t tracked) {
  if (tracked_.exchange(tracked) == tracked) return;
  for (auto& s : stripes_) {
    std::lock_guard lock(s.mutex);
    s.tables.clear();
    s.shards.clear();
  }
}

double HotKeyTracker::secondsNow() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

size_t HotKeyTracker::perStripe() const {
  // A key lives in one stripe: each holds its share of the table's counters.
  const size_t tracked = tracked_.load(std::memory_order_relaxed);
  return std::max<size_t>(4, (tracked + kStripes - 1) / kStripes);
}

void HotKeyTracker::record(std::string_view table, uint64_t key, bool write, std::string_view shard,
                           std::string_view backend, double now) {
  if (!enabled()) return;
  const size_t mixed = std::hash<uint64_t>{}(key) ^ (std::hash<std::string_view>{}(table) * 31);
  Stripe& s = stripes_[mixed % kStripes];
  std::lock_guard lock(s.mutex);
  if (s.clock.needsRescale(now)) {
    const double factor = s.clock.rescale(now);
    for (auto& [name, sketch] : s.tables) sketch.scale(factor);
    for (auto& [name, sum] : s.shards) sum *= factor;
  }
  const double weight = s.clock.weight(now);
  auto t = s.tables.find(table);
  if (t == s.tables.end()) t = s.tables.emplace(std::string(table), HotKeySketch(perStripe())).first;
  t->second.add(key, weight, write, shard, backend);
  auto sh = s.shards.find(shard);
  if (sh == s.shards.end()) sh = s.shards.emplace(std::string(shard), 0.0).first;
  sh->second += weight;
}

std::map<std::string, double> HotKeyTracker::shardRates(double now) const {
  std::map<std::string, double> rates;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s.mutex);
    for (const auto& [shard, sum] : s.shards) rates[shard] += s.clock.rate(sum, now);
  }
  return rates;
}

std::vector<HotKeyRow> HotKeyTracker::top(size_t limit, double now) const {
  std::vector<HotKeyRow> rows;
  auto shard_rates = shardRates(now);
  for (const auto& s : stripes_) {
    std::lock_guard lock(s.mutex);
    for (const auto& [table, sketch] : s.tables) {
      for (const auto& e : sketch.entries()) {
        rows.push_back(HotKeyRow{table, e.key, e.shard, e.backend, s.clock.rate(e.count - e.error, now),
                                 s.clock.rate(e.writes, now), 0});
      }
    }
  }
  for (auto& r : rows) r.shard_statements_per_s = shard_rates[r.shard];
  const size_t n = std::min(limit, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(),
                    [](const HotKeyRow& a, const HotKeyRow& b) { return a.statements_per_s > b.statements_per_s; });
  rows.resize(n);
  return rows;
}

size_t HotKeyTracker::counters() const {
  size_t n = 0;
  for (const auto& s : stripes_) {
    std::lock_guard lock(s.mutex);
    for (const auto& [table, sketch] : s.tables) n += sketch.entries().size();
  }
  return n;
}

}  // namespace sp::proxy
