#include "proxy/observe/digest_table.hpp"

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
  scatters += o.scatters;
  slowest_shard_max_us = std::max(slowest_shard_max_us, o.slowest_shard_max_us);
  for (size_t i = 0; i < slowest_shard_buckets.size(); ++i) slowest_shard_buckets[i] += o.slowest_shard_buckets[i];
  for (const auto& theirs : o.shard_stats) {
    auto mine = std::find_if(shard_stats.begin(), shard_stats.end(), [&](const DigestShardStats& s) {
      return s.shard == theirs.shard && s.backend == theirs.backend;
    });
    if (mine == shard_stats.end()) {
      if (shard_stats.size() < kMaxShards) shard_stats.push_back(theirs);
      continue;
    }
    mine->count += theirs.count;
    mine->total_us += theirs.total_us;
    mine->max_us = std::max(mine->max_us, theirs.max_us);
    mine->slowest += theirs.slowest;
  }
}

namespace {
size_t bucketOf(uint64_t micros) {
  size_t bucket = 0;
  while (bucket < kDigestBucketsUs.size() && micros > kDigestBucketsUs[bucket]) ++bucket;
  return bucket;
}
}  // namespace

void DigestStats::addShards(std::span<const ShardTiming> shards) {
  if (shards.empty()) return;
  ++scatters;
  size_t slowest = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const auto& s = shards[i];
    if (s.micros > shards[slowest].micros) slowest = i;
    // A digest's scatters list their shards in the same order (the plan's):
    // the entry at the same position is almost always the one.
    DigestShardStats* entry = nullptr;
    if (i < shard_stats.size() && shard_stats[i].shard == s.shard && shard_stats[i].backend == s.backend) {
      entry = &shard_stats[i];
    } else {
      for (auto& e : shard_stats) {
        if (e.shard == s.shard && e.backend == s.backend) entry = &e;
      }
      if (!entry) {
        if (shard_stats.size() >= kMaxShards) continue;
        entry = &shard_stats.emplace_back(DigestShardStats{s.shard, s.backend});
      }
    }
    ++entry->count;
    entry->total_us += s.micros;
    entry->max_us = std::max(entry->max_us, s.micros);
  }
  const auto& last = shards[slowest];
  for (auto& e : shard_stats) {
    if (e.shard == last.shard && e.backend == last.backend) {
      ++e.slowest;
      break;
    }
  }
  slowest_shard_max_us = std::max(slowest_shard_max_us, last.micros);
  ++slowest_shard_buckets[bucketOf(last.micros)];
}

const DigestShardStats* DigestStats::slowestShard() const {
  const DigestShardStats* best = nullptr;
  for (const auto& s : shard_stats) {
    // Compare averages without division: a/b > c/d  <=>  a*d > c*b.
    if (s.count == 0) continue;
    if (!best || static_cast<double>(s.total_us) * static_cast<double>(best->count) >
                     static_cast<double>(best->total_us) * static_cast<double>(s.count)) {
      best = &s;
    }
  }
  return best;
}

uint64_t DigestStats::percentileOf(const Buckets& buckets, double q, uint64_t max_us) {
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
                         int64_t now_ms, std::span<const ShardTiming> shard_times) {
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
  ++d.buckets[bucketOf(micros)];
  d.addShards(shard_times);
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
