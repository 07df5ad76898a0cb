#include "routing/merge/merge_budget.hpp"

namespace sp::routing {

bool MergeBudget::take(uint64_t bytes) {
  const uint64_t total = this->total();
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used > total || bytes > total - used) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

bool MergeBudget::Reservation::cover(uint64_t bytes) {
  const uint64_t need = (bytes + kStep - 1) / kStep * kStep;
  if (need > held_) {
    if (!budget_->take(need - held_)) return false;
    held_ = need;
  } else if (held_ - need >= kShrinkSlack) {
    budget_->give(held_ - need);
    held_ = need;
  }
  return true;
}

void MergeBudget::Reservation::release() {
  if (held_ == 0) return;
  budget_->give(held_);
  held_ = 0;
}

}  // namespace sp::routing
