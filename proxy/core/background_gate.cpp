#include "proxy/core/background_gate.hpp"

namespace sp::proxy {

conf::BackgroundConfig BackgroundGate::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

void BackgroundGate::configure(const conf::BackgroundConfig& settings) {
  std::lock_guard lock(mutex_);
  settings_ = settings;
}

void BackgroundGate::publish(std::map<std::string, std::string> reasons) {
  std::lock_guard lock(mutex_);
  reasons_.clear();
  for (auto& [backend, why] : reasons) reasons_.emplace(backend, std::move(why));
}

std::string BackgroundGate::reason(std::string_view backend) const {
  std::lock_guard lock(mutex_);
  auto it = reasons_.find(backend);
  return it == reasons_.end() ? std::string() : it->second;
}

BackgroundGate::BackendFigures& BackgroundGate::entry(const std::string& backend) {
  auto it = figures_.find(backend);
  if (it == figures_.end()) it = figures_.emplace(backend, BackendFigures{backend}).first;
  return it->second;
}

awaitable<std::chrono::milliseconds> BackgroundGate::yield(std::string backend, std::string what,
                                                           std::function<void(const std::string&)> paused) {
  using Clock = std::chrono::steady_clock;
  std::string why = reason(backend);
  if (why.empty()) co_return std::chrono::milliseconds(0);
  const conf::BackgroundConfig limits = settings();
  {
    std::lock_guard lock(mutex_);
    auto& f = entry(backend);
    ++f.pauses;
    f.last_paused = what;
  }
  if (paused) paused(why);
  const auto started = Clock::now();
  const auto deadline = limits.max_pause_ms == 0 ? Clock::time_point::max()
                                                 : started + std::chrono::milliseconds(limits.max_pause_ms);
  auto executor = co_await asio::this_coro::executor;
  bool forced = false;
  while (!why.empty()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      forced = true;
      break;
    }
    const auto step = std::min<Clock::duration>(std::chrono::milliseconds(limits.check_ms), deadline - now);
    asio::steady_timer timer(executor, step);
    co_await timer.async_wait(kNoThrow);
    why = reason(backend);
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  std::lock_guard lock(mutex_);
  auto& f = entry(backend);
  f.paused_ms += static_cast<uint64_t>(waited.count());
  if (forced) ++f.forced;
  co_return waited;
}

std::vector<BackgroundGate::BackendFigures> BackgroundGate::figures() const {
  std::lock_guard lock(mutex_);
  std::vector<BackendFigures> out;
  for (const auto& [backend, f] : figures_) {
    out.push_back(f);
    auto it = reasons_.find(backend);
    out.back().reason = it == reasons_.end() ? "" : it->second;
  }
  for (const auto& [backend, why] : reasons_) {
    if (!figures_.contains(backend)) out.push_back(BackendFigures{backend, why});
  }
  return out;
}

}  // namespace sp::proxy
