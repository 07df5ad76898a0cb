#include "proxy/core/hot_key_queue.hpp"

#include <algorithm>

namespace sp::proxy {

HotKeyQueue::Result HotKeyQueue::admit(std::string_view key, bool bypass) {
  auto it = keys_.find(key);
  if (it == keys_.end()) it = keys_.emplace(std::string(key), Key{}).first;
  Key& k = it->second;
  // Nobody overtakes the key's queue except a bypass: a free slot with
  // waiters is only a slot whose grant is being woken.
  if (bypass || limits_.concurrency == 0 || (k.active < limits_.concurrency && k.waiting.empty())) {
    const Ticket ticket = next_ticket_++;
    ++k.active;
    holders_.emplace(ticket, it->first);
    return {Verdict::kAdmitted, ticket};
  }
  if (k.waiting.size() >= limits_.max_queued) {
    forgetIfIdle(it);
    return {Verdict::kFull, 0};
  }
  const Ticket ticket = next_ticket_++;
  k.waiting.push_back(ticket);
  waiting_.emplace(ticket, it->first);
  return {Verdict::kQueued, ticket};
}

std::vector<HotKeyQueue::Ticket> HotKeyQueue::release(Ticket ticket) {
  std::vector<Ticket> granted;
  auto h = holders_.find(ticket);
  if (h == holders_.end()) return granted;
  auto it = keys_.find(h->second);
  holders_.erase(h);
  if (it == keys_.end()) return granted;
  --it->second.active;
  grantFree(it, granted);
  forgetIfIdle(it);
  return granted;
}

bool HotKeyQueue::withdraw(Ticket ticket) {
  auto w = waiting_.find(ticket);
  if (w == waiting_.end()) return false;
  auto it = keys_.find(w->second);
  waiting_.erase(w);
  if (it == keys_.end()) return true;
  std::erase(it->second.waiting, ticket);
  forgetIfIdle(it);
  return true;
}

std::vector<HotKeyQueue::Ticket> HotKeyQueue::setLimits(Limits limits) {
  limits_ = limits;
  std::vector<Ticket> granted;
  // Off (0) admits every waiter: nothing is serialised any more.
  for (auto it = keys_.begin(); it != keys_.end(); ++it) grantFree(it, granted);
  std::erase_if(keys_, [](const auto& kv) { return kv.second.active == 0 && kv.second.waiting.empty(); });
  return granted;
}

HotKeyQueue::KeyLoad HotKeyQueue::load(std::string_view key) const {
  auto it = keys_.find(key);
  if (it == keys_.end()) return {};
  return {it->second.active, static_cast<uint32_t>(it->second.waiting.size())};
}

void HotKeyQueue::grantFree(Keys::iterator key, std::vector<Ticket>& granted) {
  Key& k = key->second;
  while (!k.waiting.empty() && (limits_.concurrency == 0 || k.active < limits_.concurrency)) {
    const Ticket ticket = k.waiting.front();
    k.waiting.pop_front();
    waiting_.erase(ticket);
    ++k.active;
    holders_.emplace(ticket, key->first);
    granted.push_back(ticket);
  }
}

void HotKeyQueue::forgetIfIdle(Keys::iterator key) {
  if (key->second.active == 0 && key->second.waiting.empty()) keys_.erase(key);
}

}  // namespace sp::proxy
