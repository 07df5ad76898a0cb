#include "proxy/digest_table.hpp"

#include <algorithm>
#include <map>

namespace sp::proxy {

void DigestStats::add(const DigestStats& o) {
  count += o.count;
  errors += o.errors;
  rows += o.rows;
  shards += o.shards;
  total_us += o.total_us;
  max_us = std::max(max_us, o.max_us);
  if (first_seen_ms == 0 || (o.first_seen_ms != 0 && o.first_seen_ms < first_seen_ms)) first_seen_ms = o.first_seen_ms;
  last_seen_ms = std::max(last_seen_ms, o.last_seen_ms);
  for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += o.buckets[i];
}

uint64_t DigestStats::percentileUs(double q) const {
  uint64_t total = 0;
  for (auto n : buckets) total += n;
  if (total == 0) return 0;
  const double wanted = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    seen += buckets[i];
    if (static_cast<double>(seen) >= wanted && seen > 0) {
      return i < kDigestBucketsUs.size() ? std::min(kDigestBucketsUs[i], max_us) : max_us;
    }
  }
  return max_us;
}

void DigestTable::record(std::string_view text, bool error, uint64_t rows, uint32_t shards, uint64_t micros,
                         int64_t now_ms) {
  if (capacity_ == 0) return;
  std::string cut;
  if (text.size() > kMaxTextBytes) {
    cut = std::string(text.substr(0, kMaxTextBytes - 3)) + "...";
    text = cut;
  }
  auto it = index_.find(text);
  if (it == index_.end()) {
    if (index_.size() >= capacity_) {
      index_.erase(lru_.back().text);
      lru_.pop_back();
      ++evictions_;
    }
    lru_.push_front(DigestStats{std::string(text)});
    lru_.front().first_seen_ms = now_ms;
    it = index_.emplace(lru_.front().text, lru_.begin()).first;
  } else if (it->second != lru_.begin()) {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  DigestStats& d = *it->second;
  ++d.count;
  if (error) ++d.errors;
  d.rows += rows;
  d.shards += shards;
  d.total_us += micros;
  d.max_us = std::max(d.max_us, micros);
  d.last_seen_ms = now_ms;
  size_t bucket = 0;
  while (bucket < kDigestBucketsUs.size() && micros > kDigestBucketsUs[bucket]) ++bucket;
  ++d.buckets[bucket];
}

std::vector<DigestStats> DigestTable::snapshot() const { return {lru_.begin(), lru_.end()}; }

void DigestTable::clear() {
  index_.clear();
  lru_.clear();
}

std::vector<DigestStats> mergeDigests(const std::vector<std::vector<DigestStats>>& per_worker, size_t limit) {
  std::map<std::string_view, DigestStats> by_text;
  for (const auto& worker : per_worker) {
    for (const auto& d : worker) {
      auto [it, fresh] = by_text.try_emplace(d.text, d);
      if (!fresh) it->second.add(d);
    }
  }
  std::vector<DigestStats> out;
  out.reserve(by_text.size());
  for (auto& [text, d] : by_text) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(),
                   [](const DigestStats& a, const DigestStats& b) { return a.total_us > b.total_us; });
  if (limit != 0 && out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace sp::proxy
