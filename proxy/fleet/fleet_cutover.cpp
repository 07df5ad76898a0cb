#include "proxy/fleet/fleet_cutover.hpp"

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/fleet/fleet_agent.hpp"

namespace sp::proxy {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(2);

double millisSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

FleetCutover::FleetCutover(ProxyContext& context, coord::FenceKeys keys, std::string mover)
    : context_(context), config_(*context.config().fleet), client_(config_), store_(client_),
      coordinator_(config_.etcd_prefix), keys_(std::move(keys)), mover_(std::move(mover)) {}

awaitable<void> FleetCutover::pause() {
  asio::steady_timer timer(co_await asio::this_coro::executor, kPoll);
  co_await timer.async_wait(kNoThrow);
}

awaitable<std::expected<void, std::string>> FleetCutover::fence() {
  using Result = std::expected<void, std::string>;
  int64_t lease = context_.fleet ? context_.fleet->lease() : 0;
  if (lease == 0) {
    co_return Result(std::unexpected(std::string(
        "this proxy has no session with the coordination store (etcd): the fleet's proxies cannot be fenced")));
  }
  auto started = Clock::now();
  auto epoch = coordinator_.allocateEpoch(store_);
  if (!epoch) co_return Result(std::unexpected("fence: " + epoch.error()));
  auto created = coordinator_.begin(store_, *epoch, keys_, mover_, lease);
  if (!created) co_return Result(std::unexpected("fence: " + created.error()));
  epoch_ = *epoch;
  guard_ = coord::EtcdGuard{coord::fenceRequestKey(config_.etcd_prefix, epoch_), *created};
  const auto timeout = std::chrono::milliseconds(config_.fence_ack_timeout_ms);
  std::string why;
  for (;;) {
    auto progress = coordinator_.progress(store_, epoch_);
    if (progress && progress->ready()) break;
    why = progress ? coord::describeMissing(*progress) : progress.error();
    if (Clock::now() - started >= timeout) {
      abandon();
      co_return Result(std::unexpected(fmt::format("fleet fence not acknowledged within {} ms "
                                                   "(fleet.fence_ack_timeout_ms): {}",
                                                   timeout.count(), why)));
    }
    co_await pause();
  }
  ack_ms_ = millisSince(started);
  spdlog::info("fleet fence {} ({}): every proxy holds the keys after {:.1f} ms", epoch_, keys_.table, ack_ms_);
  co_return Result{};
}

awaitable<std::string> FleetCutover::finish(int64_t map_revision) {
  auto started = Clock::now();
  if (auto marked = coordinator_.markSwitched(store_, epoch_, map_revision, context_.fleet ? context_.fleet->lease() : 0);
      !marked) {
    // The proxies release after applying the map anyway (their watch brings the map before the lift).
    spdlog::warn("fleet fence {}: switch not marked: {}", epoch_, marked.error());
  }
  const auto timeout = std::chrono::milliseconds(config_.fence_serve_timeout_ms);
  std::vector<std::string> behind;
  for (;;) {
    auto b = coordinator_.notServing(store_, map_revision);
    if (b && b->empty()) {
      behind.clear();
      break;
    }
    if (b) behind = *b;
    if (Clock::now() - started >= timeout) break;
    co_await pause();
  }
  double serve_ms = millisSince(started);
  int64_t epoch = epoch_;
  abandon();
  std::string note = fmt::format("fleet: every proxy held the keys {:.1f} ms after the fence; ", ack_ms_);
  if (behind.empty()) {
    note += fmt::format("every live proxy served the new map {:.1f} ms after the switch", serve_ms);
  } else {
    // They keep the keys refused until they apply it (fleet_fences.hpp): no write reaches the old place.
    note += fmt::format("{} did not report the new map within {} ms (fleet.fence_serve_timeout_ms); they refuse "
                        "writes to the keys (9138) until they apply it",
                        fmt::join(behind, ", "), timeout.count());
  }
  spdlog::info("fleet fence {} lifted: {}", epoch, note);
  co_return note;
}

void FleetCutover::abandon() {
  if (epoch_ == 0) return;
  if (auto lifted = coordinator_.lift(store_, epoch_); !lifted) {
    // The request lives under this proxy's lease: it goes with the lease at the latest.
    spdlog::warn("fleet fence {}: not lifted: {} (it is lifted when this proxy's lease expires)", epoch_,
                 lifted.error());
  }
  epoch_ = 0;
  guard_.reset();
}

}  // namespace sp::proxy
