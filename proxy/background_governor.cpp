#include "proxy/background_governor.hpp"

#include <spdlog/spdlog.h>

#include "proxy/core/background_gate.hpp"
#include "proxy/core/background_signals.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

void BackgroundGovernor::start() {
  asio::co_spawn(io_, run(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

void BackgroundGovernor::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

awaitable<void> BackgroundGovernor::run() {
  asio::steady_timer timer(io_);
  for (;;) {
    check();
    timer.expires_after(std::chrono::milliseconds(gate_.settings().check_ms));
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

std::map<std::string, std::vector<uint64_t>> BackgroundGovernor::latencyWindows() {
  std::map<std::string, std::vector<uint64_t>> cumulative;
  for (Worker* worker : context_.workers) {
    auto copy = std::make_shared<std::vector<std::pair<std::string, Histogram>>>();
    if (!runOnWorker(*worker, [worker, copy] { *copy = worker->backendLatencies(); }, std::chrono::seconds(1))) {
      continue;  // shutting down, or too busy to answer: its statements count at the next check
    }
    for (const auto& [backend, histogram] : *copy) {
      auto& sum = cumulative[backend];
      sum.resize(histogram.counts().size(), 0);
      for (size_t i = 0; i < histogram.counts().size(); ++i) sum[i] += histogram.counts()[i];
    }
  }
  std::map<std::string, std::vector<uint64_t>> window;
  for (const auto& [backend, counts] : cumulative) {
    auto& w = window[backend];
    w = counts;
    if (auto it = previous_.find(backend); it != previous_.end() && it->second.size() == counts.size()) {
      for (size_t i = 0; i < counts.size(); ++i) w[i] = counts[i] >= it->second[i] ? counts[i] - it->second[i] : 0;
    }
  }
  previous_ = std::move(cumulative);
  return window;
}

void BackgroundGovernor::check() {
  std::map<std::string, BackendSignal> signals;
  for (const auto& [backend, counts] : latencyWindows()) {
    auto& s = signals[backend];
    s.backend = backend;
    for (uint64_t c : counts) s.statements += c;
    s.p99_seconds = quantileUpperBound(kLatencyBounds, counts, 0.99);
  }
  if (auto health = context_.replica_health.load()) {
    for (const auto& server : health->servers) {
      if (server.primary || server.fenced || !server.replicating || !server.lag_seconds) continue;
      auto& s = signals[server.backend];
      s.backend = server.backend;
      if (!s.lag_s || *server.lag_seconds > *s.lag_s) {
        s.lag_s = server.lag_seconds;
        s.lagging_replica = server.name;
      }
    }
  }
  std::vector<BackendSignal> list;
  for (auto& [backend, s] : signals) list.push_back(std::move(s));
  auto reasons = overloadReasons(gate_.settings(), list);
  for (const auto& [backend, why] : reasons) {
    if (!reasons_.contains(backend)) spdlog::warn("background work on {} yields: {}", backend, why);
  }
  for (const auto& [backend, why] : reasons_) {
    if (!reasons.contains(backend)) spdlog::info("background work on {} goes on: no longer overloaded", backend);
  }
  reasons_ = reasons;
  gate_.publish(std::move(reasons));
}

}  // namespace sp::proxy
