#include "proxy/core/host_limits.hpp"

namespace sp::proxy {

std::optional<HostConnectionLimiter::Slot> HostConnectionLimiter::tryAcquire(const std::string& host,
                                                                           uint32_t limit) {
  std::lock_guard lock(mutex_);
  uint32_t& n = counts_[host];
  if (limit != 0 && n >= limit) {
    if (n == 0) counts_.erase(host);
    return std::nullopt;
  }
  ++n;
  return Slot(*this, host);
}

uint32_t HostConnectionLimiter::count(const std::string& host) const {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(host);
  return it == counts_.end() ? 0 : it->second;
}

void HostConnectionLimiter::release(const std::string& host) {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(host);
  if (it == counts_.end()) return;
  if (--it->second == 0) counts_.erase(it);  // the map holds only hosts connected now
}

}  // namespace sp::proxy
