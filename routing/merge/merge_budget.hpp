// Memory all concurrent scatter merges may buffer together
// (scatter.max_merge_bytes_total), besides each statement's own cap
// (scatter.max_merge_bytes): without it, N sessions each within their own
// cap still add up to N times it. A statement reserves what its merger
// buffers (ResultMerger::bufferedBytes) as it grows, in 64 KiB steps so the
// shared counter is touched once per step, not once per row; a statement the
// budget cannot cover fails, and its reservation is freed when it ends.
// Thread-safe (one budget for every worker thread); no sockets.
#pragma once
#include <atomic>
#include <cstdint>

namespace sp::routing {

class MergeBudget {
 public:
  explicit MergeBudget(uint64_t total_bytes = 0) : total_(total_bytes) {}
  MergeBudget(const MergeBudget&) = delete;
  MergeBudget& operator=(const MergeBudget&) = delete;

  void setTotal(uint64_t total_bytes) { total_.store(total_bytes, std::memory_order_relaxed); }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }

  // One statement's share; gives back what it holds when destroyed.
  class Reservation {
   public:
    explicit Reservation(MergeBudget& budget) : budget_(&budget) {}
    Reservation(Reservation&& other) noexcept : budget_(other.budget_), held_(other.held_) { other.held_ = 0; }
    Reservation& operator=(Reservation&&) = delete;
    Reservation(const Reservation&) = delete;
    ~Reservation() { release(); }

    // Makes what this statement holds cover `bytes` (rounded up to a step);
    // false when the rest of the budget cannot: what it held stays held
    // until release() or destruction, so the caller fails the statement.
    // Shrinks what it holds when `bytes` fell well below it.
    bool cover(uint64_t bytes);
    uint64_t held() const { return held_; }
    void release();

   private:
    MergeBudget* budget_;
    uint64_t held_ = 0;
  };

  static constexpr uint64_t kStep = 64 * 1024;
  // Held beyond need before cover() gives the surplus back.
  static constexpr uint64_t kShrinkSlack = 16 * kStep;

 private:
  bool take(uint64_t bytes);
  void give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  std::atomic<uint64_t> total_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace sp::routing
