// Waiting on one worker thread for a slot that another thread grants: the
// mechanism shared by the per-backend budget (backend_admission.hpp) and the
// hot-key serialiser (hot_key_gate.hpp). A waiter sleeps on a timer of its own
// worker until its deadline; a grant, made under the owner's mutex on any
// thread, cancels that timer on the waiter's own executor (a timer is never
// touched from another thread). The waiter registers and checks for a grant
// made before it registered under the same mutex, so no grant is missed.
//
// AdmissionWait is the session's handle on whatever it waits for now (a slot
// here, or a paced turn): KILL QUERY, run on the session's own thread, ends
// the wait at once.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "proxy/net/net.hpp"

namespace sp::proxy {

class AdmissionWait {
 public:
  // Ends the wait in progress (outside a wait it does nothing: a running
  // statement's KILL QUERY is the backends' business).
  void interrupt();
  // A plain delay that the same KILL ends (a hot key's paced turn): false
  // when interrupted.
  awaitable<bool> sleepUntil(std::chrono::steady_clock::time_point at);
  // Whether the last wait ended by interrupt().
  bool interrupted() const { return interrupted_; }

 private:
  friend class GrantWaiters;
  void begin(asio::steady_timer& timer) {
    interrupted_ = false;
    timer_ = &timer;
  }
  void end() { timer_ = nullptr; }
  asio::steady_timer* timer_ = nullptr;
  bool interrupted_ = false;
};

// The waiters of one queue. Not thread-safe by itself: every call but wait()
// is made under the owner's mutex, the one wait() is given.
class GrantWaiters {
 public:
  using Ticket = uint64_t;

  // Wakes the waiters of `granted` (those not waiting yet see the grant when
  // they check).
  void wake(const std::vector<Ticket>& granted);
  // A waiter that will never wait again (its session ended while queued).
  void forget(Ticket ticket);

  // Waits until `ticket` is granted (its wake), `deadline`, or `handle` is
  // interrupted. `granted` is asked under `mutex` right after registering.
  // Returns with the waiter forgotten; the caller then settles the ticket
  // under `mutex` (its queue says whether it was granted meanwhile).
  awaitable<void> wait(std::mutex& mutex, Ticket ticket, std::chrono::steady_clock::time_point deadline,
                       const std::function<bool()>& granted, AdmissionWait* handle);

 private:
  struct Waiter {
    asio::any_io_executor executor;
    asio::steady_timer* timer = nullptr;  // null once it stopped waiting
  };
  std::unordered_map<Ticket, std::shared_ptr<Waiter>> waiters_;
};

}  // namespace sp::proxy
