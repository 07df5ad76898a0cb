#include "proxy/move/hot_key_mover.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/fleet/fleet_agent.hpp"
#include "proxy/move/move_coordinator.hpp"

namespace sp::proxy {

namespace {

// The tracker's rates are decayed over about 5 s: checking more often would
// see nothing new, much less often would lengthen a short sustain_seconds.
constexpr auto kCheckInterval = std::chrono::seconds(1);
// The busiest keys of all tables the policy looks at: a due key has half of
// its shard's statements or so, so it is among the first few of its table.
constexpr size_t kKeysLooked = 64;

}  // namespace

void HotKeyMover::start() { asio::co_spawn(moves_.executor(), run(), asio::detached); }

awaitable<void> HotKeyMover::run() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(kCheckInterval);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    check();
  }
}

bool HotKeyMover::decides() const {
  if (!context_.config().fleet) return true;
  return context_.fleet != nullptr && context_.fleet_session.load() && context_.fleet->roles()->leads();
}

void HotKeyMover::check() {
  const auto settings = context_.hot_key_auto_move.load();
  policy_.configure(settings ? *settings : conf::HotKeyAutoMoveConfig{});
  if (!settings || !settings->enabled) {
    decided_ = false;
    blocked_.clear();
    return;
  }
  const bool decides_now = decides();
  if (decides_now != decided_ && context_.config().fleet) {
    spdlog::info(decides_now ? "hot-key policy: this proxy holds ha/leader: it decides the fleet's hot-key moves"
                             : "hot-key policy: this proxy no longer holds ha/leader: it starts no hot-key move");
  }
  decided_ = decides_now;
  if (!decides_now) {
    policy_.forgetKeys();  // a key's sustain counts from when this proxy judges it
    return;
  }
  HotKeyPolicyInput input;
  input.keys = context_.hot_key_stats.top(kKeysLooked);
  input.shard_rates = context_.hot_key_stats.shardRates();
  const auto map = context_.shard_map.load();
  input.map = map.get();
  input.running = moves_.running();
  auto decision = policy_.check(std::chrono::steady_clock::now(), input);
  if (policy_.blocked() != blocked_) {
    blocked_ = policy_.blocked();
    if (!blocked_.empty()) spdlog::info("hot-key policy: {}", blocked_);
  }
  if (decision) startMove(*decision);
}

void HotKeyMover::startMove(const HotKeyMoveDecision& d) {
  const auto now = std::chrono::steady_clock::now();
  const std::string why = fmt::format("{:.0f}% of shard {}'s keyed statements at {:.0f}/s for {:.0f} s",
                                      d.share * 100, d.source_shard, d.statements_per_s, d.hot_seconds);
  auto id = moves_.start(d.request, "policy:hot_key_auto_move (" + why + ")");
  if (!id) {
    // Counted as an attempt: the next one waits for the cooldown, whatever the cause.
    policy_.refused(now);
    context_.hot_key_auto_moves_refused.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("hot-key policy: key {} of {} ({}): MOVE KEY to {} refused ({}): {}; no other move before "
                 "overload.hot_key_auto_move.cooldown_seconds",
                 d.request.key, d.request.table, why, d.request.target, id.error().code, id.error().message);
    return;
  }
  policy_.started(now, *id);
  context_.hot_key_auto_moves_started.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("hot-key policy: key {} of {} ({}): move {} to shard {} started (SHOW MOVES)", d.request.key,
               d.request.table, why, *id, d.request.target);
}

}  // namespace sp::proxy
