#include "proxy/move/target_cleanup.hpp"

#include <algorithm>

namespace sp::proxy {

namespace {
constexpr std::string_view kNotDeleted = "; the target's copied rows were not deleted";
}  // namespace

void noteTargetNotCleared(MoveRecord& r, const std::string& why) {
  r.target_cleanup = TargetCleanup::kPending;
  r.message += std::string(kNotDeleted) + " (" + why + "): deleted once the target answers again";
}

void noteTargetCleared(MoveRecord& r, const std::string& at) {
  r.target_cleanup = TargetCleanup::kDone;
  r.target_cleanup_at = at;
  // The note of the failed delete is out of date: replaced, the reason the move stopped kept.
  if (auto pos = r.message.find(kNotDeleted); pos != std::string::npos) r.message.erase(pos);
  r.message += "; the target's copied rows were deleted when it was back (" + at + ")";
}

void noteTargetCleanupAbandoned(MoveRecord& r, const std::string& why) {
  r.target_cleanup = TargetCleanup::kAbandoned;
  if (auto pos = r.message.find(kNotDeleted); pos != std::string::npos) r.message.erase(pos);
  r.message += "; the target's copied rows were not deleted: " + why;
}

std::string describeTargetCleanup(const MoveRecord& r, const std::string& last_error) {
  switch (r.target_cleanup) {
    case TargetCleanup::kNone: return "-";
    case TargetCleanup::kPending: return last_error.empty() ? "pending" : "pending (last try: " + last_error + ")";
    case TargetCleanup::kDone: return "done " + r.target_cleanup_at;
    case TargetCleanup::kAbandoned: return "abandoned";
  }
  return "-";
}

bool TargetCleanupSchedule::due(int64_t id, Clock::time_point now, std::optional<bool> target_up) {
  Entry& e = entries_[id];
  if (target_up == false) {
    e.seen_up = false;
    return false;
  }
  const bool back = e.seen_up == false && target_up == true;
  e.seen_up = target_up;
  return back || now >= e.next;
}

void TargetCleanupSchedule::failed(int64_t id, Clock::time_point now) {
  Entry& e = entries_[id];
  e.pause = e.pause.count() == 0 ? first_ : std::min(e.pause * 2, longest_);
  e.next = now + e.pause;
}

}  // namespace sp::proxy
