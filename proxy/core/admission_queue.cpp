#include "proxy/core/admission_queue.hpp"

#include <algorithm>

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
  change(users_, who.first, 0, 1, 0);
  if (!who.second.empty()) change(keys_, who.second, 0, 1, 0);
  queues_[who].push_back(Waiting{ticket, next_order_++});
  waiting_.emplace(ticket, std::move(who));
  return {Verdict::kQueued, ticket};
}

void AdmissionQueue::hold(Ticket ticket, const Pair& who) {
  const uint64_t grant = ++grant_seq_;
  change(users_, who.first, 1, 0, grant);
  if (!who.second.empty()) change(keys_, who.second, 1, 0, grant);
  holders_.emplace(ticket, who);
}

std::vector<AdmissionQueue::Ticket> AdmissionQueue::release(Ticket ticket) {
  std::vector<Ticket> granted;
  auto it = holders_.find(ticket);
  if (it == holders_.end()) return granted;
  change(users_, it->second.first, -1, 0, 0);
  if (!it->second.second.empty()) change(keys_, it->second.second, -1, 0, 0);
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
  change(users_, it->second.first, 0, -1, 0);
  if (!it->second.second.empty()) change(keys_, it->second.second, 0, -1, 0);
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
    // The sub-queue whose user and key hold the fewest slots (the larger
    // count, then both together), then the one whose user, then key, was
    // served least recently, then the oldest head.
    auto best = queues_.end();
    std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t> best_rank{};
    for (auto q = queues_.begin(); q != queues_.end(); ++q) {
      const auto& [user, key] = q->first;
      const uint32_t by_user = activeOf(users_, user);
      const uint32_t by_key = key.empty() ? 0 : activeOf(keys_, key);
      const uint64_t key_served = key.empty() ? 0 : lastGrantOf(keys_, key);
      const std::tuple rank{std::max(by_user, by_key), by_user + by_key, lastGrantOf(users_, user), key_served,
                            q->second.front().order};
      if (best == queues_.end() || rank < best_rank) {
        best = q;
        best_rank = rank;
      }
    }
    const Ticket ticket = best->second.front().ticket;
    Pair who = best->first;
    best->second.pop_front();
    if (best->second.empty()) queues_.erase(best);
    waiting_.erase(ticket);
    change(users_, who.first, 0, -1, 0);
    if (!who.second.empty()) change(keys_, who.second, 0, -1, 0);
    hold(ticket, who);
    granted.push_back(ticket);
  }
}

uint32_t AdmissionQueue::activeOf(const Shares& shares, std::string_view name) {
  auto it = shares.find(name);
  return it == shares.end() ? 0 : it->second.active;
}

uint64_t AdmissionQueue::lastGrantOf(const Shares& shares, std::string_view name) {
  auto it = shares.find(name);
  return it == shares.end() ? 0 : it->second.last_grant;
}

void AdmissionQueue::change(Shares& shares, const std::string& name, int active, int waiting, uint64_t grant) {
  auto it = shares.find(name);
  if (it == shares.end()) {
    if (active <= 0 && waiting <= 0) return;
    it = shares.emplace(name, Share{}).first;
  }
  Share& s = it->second;
  s.active = static_cast<uint32_t>(static_cast<int64_t>(s.active) + active);
  s.waiting = static_cast<uint32_t>(static_cast<int64_t>(s.waiting) + waiting);
  if (grant != 0) s.last_grant = grant;
  if (s.active == 0 && s.waiting == 0) shares.erase(it);
}

}  // namespace sp::proxy
