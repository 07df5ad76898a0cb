#include "proxy/core/admission_queue.hpp"

#include <limits>

namespace sp::proxy {

AdmissionQueue::Result AdmissionQueue::admit(std::string_view user, std::string_view key, bool bypass) {
  Pair who{std::string(user), std::string(key)};
  // Nobody may overtake the queue except a bypass: a free slot with waiters
  // is only a slot whose grant is being woken.
  if (bypass || (hasFreeSlot() && waiting_.empty())) {
    const Ticket ticket = next_ticket_++;
    hold(ticket, who);
    return {Verdict::kAdmitted, ticket};
  }
  if (waiting_.size() >= limits_.max_queued) return {Verdict::kFull, 0};
  const Ticket ticket = next_ticket_++;
  queues_[who].push_back(Waiting{ticket, next_order_++});
  waiting_.emplace(ticket, std::move(who));
  return {Verdict::kQueued, ticket};
}

void AdmissionQueue::hold(Ticket ticket, const Pair& who) {
  ++user_active_[who.first];
  if (!who.second.empty()) ++key_active_[who.second];
  holders_.emplace(ticket, who);
}

std::vector<AdmissionQueue::Ticket> AdmissionQueue::release(Ticket ticket) {
  std::vector<Ticket> granted;
  auto it = holders_.find(ticket);
  if (it == holders_.end()) return granted;
  countDown(user_active_, it->second.first);
  if (!it->second.second.empty()) countDown(key_active_, it->second.second);
  holders_.erase(it);
  grantFree(granted);
  return granted;
}

bool AdmissionQueue::withdraw(Ticket ticket) {
  auto it = waiting_.find(ticket);
  if (it == waiting_.end()) return false;
  auto q = queues_.find(it->second);
  if (q != queues_.end()) {
    std::erase_if(q->second, [&](const Waiting& w) { return w.ticket == ticket; });
    if (q->second.empty()) queues_.erase(q);
  }
  waiting_.erase(it);
  return true;
}

std::vector<AdmissionQueue::Ticket> AdmissionQueue::setLimits(Limits limits) {
  limits_ = limits;
  std::vector<Ticket> granted;
  grantFree(granted);
  return granted;
}

void AdmissionQueue::grantFree(std::vector<Ticket>& granted) {
  while (hasFreeSlot() && !queues_.empty()) {
    // The sub-queue whose user and key hold the fewest slots; ties: the oldest head.
    auto best = queues_.end();
    uint32_t best_share = std::numeric_limits<uint32_t>::max();
    uint64_t best_order = 0;
    for (auto q = queues_.begin(); q != queues_.end(); ++q) {
      const auto& [user, key] = q->first;
      const uint32_t share = std::max(countOf(user_active_, user), key.empty() ? 0 : countOf(key_active_, key));
      const uint64_t order = q->second.front().order;
      if (share < best_share || (share == best_share && order < best_order)) {
        best = q;
        best_share = share;
        best_order = order;
      }
    }
    const Ticket ticket = best->second.front().ticket;
    Pair who = best->first;
    best->second.pop_front();
    if (best->second.empty()) queues_.erase(best);
    waiting_.erase(ticket);
    hold(ticket, who);
    granted.push_back(ticket);
  }
}

uint32_t AdmissionQueue::countOf(const Counts& counts, std::string_view name) {
  auto it = counts.find(name);
  return it == counts.end() ? 0 : it->second;
}

void AdmissionQueue::countDown(Counts& counts, const std::string& name) {
  auto it = counts.find(name);
  if (it == counts.end()) return;
  if (--it->second == 0) counts.erase(it);
}

}  // namespace sp::proxy
