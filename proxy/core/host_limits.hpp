// Client connections per source address (server.max_connections_per_host),
// counted across all worker threads. A slot is held from accept until the
// session's coroutine ends, so unauthenticated sockets count too: one host
// cannot take every max_connections slot by connecting and sending nothing.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace sp::proxy {

class HostConnectionLimiter {
 public:
  // Releases its host's count when destroyed (move-only).
  class Slot {
   public:
    Slot(HostConnectionLimiter& owner, std::string host) : owner_(&owner), host_(std::move(host)) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_), host_(std::move(other.host_)) { other.owner_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot() {
      if (owner_) owner_->release(host_);
    }

   private:
    HostConnectionLimiter* owner_;
    std::string host_;
  };

  // nullopt when `host` already holds `limit` connections (limit 0: no limit).
  std::optional<Slot> tryAcquire(const std::string& host, uint32_t limit);
  uint32_t count(const std::string& host) const;

 private:
  void release(const std::string& host);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> counts_;
};

}  // namespace sp::proxy
