// One holder at a time, waiting in order, for coroutines of one worker thread
// (no locks: everything here runs on the worker's io_context).
//
// Used so that statements taking several pooled connections at once (scatter,
// split writes) take them one statement at a time: two such statements that
// each grab part of what they need and wait for the rest would hold-and-wait
// on each other until the pool timeout. A holder only waits for connections
// that single-statement borrowers and finished multi-shard statements give
// back, so progress is guaranteed whenever one statement's need fits the pool.
#pragma once
#include <algorithm>
#include <deque>
#include <utility>

#include "proxy/net/net.hpp"

namespace sp::proxy {

class AsyncGate {
 public:
  explicit AsyncGate(asio::any_io_executor executor) : executor_(std::move(executor)) {}

  // Leaves the gate on destruction (every return path of the holder).
  class Pass {
   public:
    explicit Pass(AsyncGate* gate) : gate_(gate) {}
    Pass(Pass&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    Pass& operator=(Pass&&) = delete;
    ~Pass() { release(); }
    void release() {
      if (gate_) std::exchange(gate_, nullptr)->leave();
    }

   private:
    AsyncGate* gate_;
  };

  awaitable<Pass> enter() {
    if (held_ || !waiters_.empty()) {
      asio::steady_timer timer(executor_, asio::steady_timer::time_point::max());
      waiters_.push_back(&timer);
      Unqueue unqueue{this, &timer};
      // Woken by leave(), which hands the gate over before cancelling.
      for (;;) {
        co_await timer.async_wait(kNoThrow);
        if (handed_to_ == &timer) break;
      }
      handed_to_ = nullptr;
      co_return Pass(this);
    }
    held_ = true;
    co_return Pass(this);
  }

  bool held() const { return held_; }

 private:
  // A waiter whose coroutine is destroyed (session torn down at shutdown)
  // leaves the queue, and passes the gate on if it had just been handed it.
  struct Unqueue {
    AsyncGate* gate;
    asio::steady_timer* timer;
    ~Unqueue() {
      std::erase(gate->waiters_, timer);
      if (gate->handed_to_ == timer) {
        gate->handed_to_ = nullptr;
        gate->leave();
      }
    }
  };

  void leave() {
    if (waiters_.empty()) {
      held_ = false;
      return;
    }
    // Stays held: ownership passes straight to the oldest waiter.
    asio::steady_timer* next = waiters_.front();
    waiters_.pop_front();
    handed_to_ = next;
    next->cancel();
  }

  asio::any_io_executor executor_;
  bool held_ = false;
  std::deque<asio::steady_timer*> waiters_;
  asio::steady_timer* handed_to_ = nullptr;
};

}  // namespace sp::proxy
