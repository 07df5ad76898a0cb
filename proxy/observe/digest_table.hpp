// Query digests (admin SHOW DIGESTS): statistics per normalized statement
// (the plan cache's normalization: literals as `?`, comments and spacing
// dropped). One table per worker thread, bounded: past its capacity the
// least recently seen digest is evicted (and counted). No locks: the admin
// port reads a copy taken on the worker's thread and merges the copies.
#pragma once
#include <array>
#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sp::proxy {

// Upper bounds (µs) of the time buckets each digest keeps for its percentiles.
inline constexpr std::array<uint64_t, 16> kDigestBucketsUs = {100,    250,    500,     1000,    2500,   5000,
                                                              10000,  25000,  50000,   100000,  250000, 500000,
                                                              1000000, 2500000, 5000000, 10000000};

// One shard's part in a scatter: from sending its query to its last packet.
struct ShardTiming {
  std::string shard;
  std::string backend;
  uint64_t micros = 0;
  uint64_t rows = 0;
};

// A digest's executions as one shard saw them (scatters only).
struct DigestShardStats {
  std::string shard;
  std::string backend;
  uint64_t count = 0;
  uint64_t total_us = 0;
  uint64_t max_us = 0;
  uint64_t slowest = 0;  // executions in which this shard answered last
};

struct DigestStats {
  std::string text;           // the normalized statement
  uint64_t count = 0;
  uint64_t errors = 0;
  uint64_t rows = 0;          // rows sent to clients
  uint64_t shards = 0;        // shards queried, summed over executions
  uint64_t total_us = 0;
  uint64_t max_us = 0;
  int64_t first_seen_ms = 0;  // Unix time, milliseconds
  int64_t last_seen_ms = 0;
  std::array<uint32_t, kDigestBucketsUs.size() + 1> buckets{};  // executions per time bucket (last: above all)
  // Scatters: the slowest shard's time of each execution (the critical path
  // of the fan-out) as buckets, and every shard's own totals. At most
  // kMaxShards entries (a shard map's tables have fewer shards than that).
  uint64_t scatters = 0;
  uint64_t slowest_shard_max_us = 0;
  std::array<uint32_t, kDigestBucketsUs.size() + 1> slowest_shard_buckets{};
  std::vector<DigestShardStats> shard_stats;
  static constexpr size_t kMaxShards = 256;

  void add(const DigestStats& other);  // another worker's statistics of the same text
  void addShards(std::span<const ShardTiming> shards);  // one scatter execution
  // The time under which a fraction q of the executions finished: the upper
  // bound of the bucket holding that execution, never above max_us.
  uint64_t percentileUs(double q) const { return percentileOf(buckets, q, max_us); }
  // The same over each scatter execution's slowest shard.
  uint64_t slowestShardPercentileUs(double q) const {
    return percentileOf(slowest_shard_buckets, q, slowest_shard_max_us);
  }
  // The shard with the largest average time ("" when no scatter ran).
  const DigestShardStats* slowestShard() const;

  using Buckets = std::array<uint32_t, kDigestBucketsUs.size() + 1>;
  static uint64_t percentileOf(const Buckets& buckets, double q, uint64_t max_us);
};

class DigestTable {
 public:
  // Texts longer than this are cut (and end in "..."): digests of very long
  // statements that differ only past it are counted together.
  static constexpr size_t kMaxTextBytes = 2048;

  explicit DigestTable(size_t capacity) : capacity_(capacity) {}

  // `shard_times`: a scatter's shards (empty for other statements).
  void record(std::string_view text, bool error, uint64_t rows, uint32_t shards, uint64_t micros, int64_t now_ms,
              std::span<const ShardTiming> shard_times = {});
  std::vector<DigestStats> snapshot() const;
  void clear();
  size_t size() const { return index_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t evictions() const { return evictions_; }

 private:
  size_t capacity_;
  std::list<DigestStats> lru_;  // most recently seen first
  // Keys view the text of their list node (list nodes never move).
  std::unordered_map<std::string_view, std::list<DigestStats>::iterator> index_;
  uint64_t evictions_ = 0;
};

// The digests of every worker added up by text, sorted by total time
// (largest first, then by text), at most `limit` of them (0: all).
std::vector<DigestStats> mergeDigests(const std::vector<std::vector<DigestStats>>& per_worker, size_t limit);

}  // namespace sp::proxy
