#include "proxy/core/grant_waiters.hpp"

#include <boost/asio/post.hpp>

namespace sp::proxy {

void AdmissionWait::interrupt() {
  if (!timer_) return;
  interrupted_ = true;
  timer_->cancel();
}

awaitable<bool> AdmissionWait::sleepUntil(std::chrono::steady_clock::time_point at) {
  asio::steady_timer timer(co_await asio::this_coro::executor, at);
  begin(timer);
  co_await timer.async_wait(kNoThrow);
  end();
  co_return !interrupted_;
}

void GrantWaiters::wake(const std::vector<Ticket>& granted) {
  for (auto ticket : granted) {
    auto it = waiters_.find(ticket);
    if (it == waiters_.end()) continue;  // not waiting yet: wait() sees the grant
    asio::post(it->second->executor, [waiter = it->second] {
      if (waiter->timer) waiter->timer->cancel();
    });
  }
}

void GrantWaiters::forget(Ticket ticket) {
  if (auto it = waiters_.find(ticket); it != waiters_.end()) {
    it->second->timer = nullptr;
    waiters_.erase(it);
  }
}

awaitable<void> GrantWaiters::wait(std::mutex& mutex, Ticket ticket, std::chrono::steady_clock::time_point deadline,
                                   const std::function<bool()>& granted, AdmissionWait* handle) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, deadline);
  auto waiter = std::make_shared<Waiter>();
  waiter->executor = executor;
  waiter->timer = &timer;
  bool granted_already = false;
  {
    // Registered and checked under one lock: either this sees the grant or
    // the grant's wake finds the timer.
    std::lock_guard lock(mutex);
    waiters_[ticket] = waiter;
    granted_already = granted();
  }
  if (handle) handle->begin(timer);
  if (!granted_already) co_await timer.async_wait(kNoThrow);
  if (handle) handle->end();
  std::lock_guard lock(mutex);
  forget(ticket);
}

}  // namespace sp::proxy
