// Query digests (admin SHOW DIGESTS): statistics per normalized statement
// (the plan cache's normalization: literals as `?`, comments and spacing
// dropped). One table per worker thread, bounded: past its capacity the
// least recently seen digest is evicted (and counted). No locks: the admin
// port reads a copy taken on the worker's thread and merges the copies.
#pragma once
#include <array>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sp::proxy {

// Upper bounds (µs) of the time buckets each digest keeps for its percentiles.
inline constexpr std::array<uint64_t, 16> kDigestBucketsUs = {100,    250,    500,     1000,    2500,   5000,
                                                              10000,  25000,  50000,   100000,  250000, 500000,
                                                              1000000, 2500000, 5000000, 10000000};

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

  void add(const DigestStats& other);  // another worker's statistics of the same text
  // The time under which a fraction q of the executions finished: the upper
  // bound of the bucket holding that execution, never above max_us.
  uint64_t percentileUs(double q) const;
};

class DigestTable {
 public:
  // Texts longer than this are cut (and end in "..."): digests of very long
  // statements that differ only past it are counted together.
  static constexpr size_t kMaxTextBytes = 2048;

  explicit DigestTable(size_t capacity) : capacity_(capacity) {}

  void record(std::string_view text, bool error, uint64_t rows, uint32_t shards, uint64_t micros, int64_t now_ms);
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
