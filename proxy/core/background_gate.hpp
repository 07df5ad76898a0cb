// Background work yields to the foreground (docs/operations.md, "Background
// work yields"): moves, archiving, partition upkeep and schema changes ask
// here before each step (a batch, a table) on a backend, and wait while the
// governor (proxy/background_governor.hpp) says that backend is overloaded:
// the clients' p99 there above background.max_foreground_p99_ms, or one of
// its replicas further behind than background.max_replica_lag_s. A wait lasts
// at most background.max_pause_ms, then one step runs anyway: under a lasting
// overload background work slows down instead of never finishing.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "conf/background_config.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class BackgroundGate {
 public:
  explicit BackgroundGate(const conf::BackgroundConfig& settings) : settings_(settings) {}

  // The thresholds in force (the config's, or SET BACKGROUND's on the admin port).
  conf::BackgroundConfig settings() const;
  void configure(const conf::BackgroundConfig& settings);

  // The governor, after each check: why each overloaded backend's background
  // work should wait now (absent: it need not).
  void publish(std::map<std::string, std::string> reasons);
  std::string reason(std::string_view backend) const;

  // Before a step on `backend`: waits while it is overloaded, at most
  // background.max_pause_ms. `paused(reason)` is called once when a wait
  // starts (for the work's SHOW output). Returns how long it waited.
  awaitable<std::chrono::milliseconds> yield(std::string backend, std::string what,
                                             std::function<void(const std::string&)> paused = {});

  struct BackendFigures {
    std::string backend;
    std::string reason;        // now ("" none)
    uint64_t pauses = 0;       // waits begun
    uint64_t paused_ms = 0;    // their time
    uint64_t forced = 0;       // waits that ran out (background.max_pause_ms) and let a step run anyway
    std::string last_paused;   // what waited last ("move 3", "schema change 7", ...)
  };
  std::vector<BackendFigures> figures() const;

 private:
  BackendFigures& entry(const std::string& backend);  // mutex_ held

  mutable std::mutex mutex_;
  conf::BackgroundConfig settings_;
  std::map<std::string, std::string, std::less<>> reasons_;
  std::map<std::string, BackendFigures, std::less<>> figures_;
};

// gate->yield(...) when there is a gate (none in unit tests of the callers).
inline awaitable<std::chrono::milliseconds> yieldToForeground(BackgroundGate* gate, std::string backend, std::string what,
                                                              std::function<void(const std::string&)> paused = {}) {
  if (gate == nullptr) co_return std::chrono::milliseconds(0);
  co_return co_await gate->yield(std::move(backend), std::move(what), std::move(paused));
}

}  // namespace sp::proxy
