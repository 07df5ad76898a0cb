#include "proxy/backend/backend_pool.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/backend/global_defaults.hpp"

namespace sp::proxy {

namespace {
constexpr auto kMaxWait = std::chrono::seconds(10);
constexpr auto kMinBackoff = std::chrono::milliseconds(100);
// At most the replica monitor's default check interval (ha.check_interval_ms):
// a server that accepts connections again is used within half a second.
constexpr auto kMaxBackoff = std::chrono::milliseconds(500);
// After the server refused a connection for lack of connections: how long the
// pool lends only what it has instead of opening more.
constexpr auto kServerFullPause = std::chrono::milliseconds(200);

// Refusals that say the server is full, not down: its max_connections, the
// account's MAX_USER_CONNECTIONS or MAX_CONNECTIONS_PER_HOUR.
bool refusedForConnectionLimit(const BackendError& e) {
  return e.kind == BackendError::Kind::kServer && (e.code == 1040 || e.code == 1203 || e.code == 1226);
}
constexpr auto kMaintenancePeriod = std::chrono::seconds(1);
constexpr auto kPeekAfterIdle = std::chrono::milliseconds(50);
// Returned loans whose map nodes are kept for the next loans (a few dozen
// bytes each): enough for the loans a worker has out at once in practice.
constexpr size_t kMaxSpareLentNodes = 256;
}  // namespace

BackendPool::BackendPool(asio::any_io_executor executor, conf::BackendConfig config, uint32_t max_size,
                         uint32_t min_size, size_t max_packet_bytes)
    : executor_(std::move(executor)),
      config_(std::make_shared<const conf::BackendConfig>(std::move(config))),
      max_size_(std::max<uint32_t>(1, max_size)),
      min_size_(std::min(min_size, max_size_)),
      max_packet_bytes_(max_packet_bytes) {
  counters_.max = max_size_;
  // This pool's share of max_connecting, in proportion to its share of max_connections.
  const uint64_t share = uint64_t{config_->max_connecting} * max_size_ / std::max<uint32_t>(1, config_->max_connections);
  max_connecting_ = static_cast<uint32_t>(std::clamp<uint64_t>(share, 1, max_size_));
}

BackendPool::~BackendPool() { *alive_ = false; }

template <class T>
awaitable<std::optional<T>> BackendPool::unlessMarkedDown(awaitable<T> op) {
  using namespace boost::asio::experimental::awaitable_operators;
  asio::steady_timer watcher(executor_, asio::steady_timer::time_point::max());
  down_watchers_.push_back(&watcher);
  auto alive = alive_;
  auto result = co_await (std::move(op) || watcher.async_wait(kNoThrow));
  if (*alive) std::erase(down_watchers_, &watcher);
  if (result.index() == 1) co_return std::nullopt;
  co_return std::move(std::get<0>(result));
}

BackendError BackendPool::downError() const {
  return BackendError{BackendError::Kind::kDown, 0, "",
                      "the server does not answer its health probes (" + probe_down_ + ")"};
}

void BackendPool::markDown(std::string reason) {
  if (reason.empty()) reason = "down";
  const bool was_up = probe_down_.empty();
  probe_down_ = std::move(reason);
  if (!was_up) return;
  ++counters_.down_transitions;
  // Only the connections to the server the pool lends to now: older
  // generations went to a previous server (a failover already cut those).
  size_t cut = 0;
  for (auto& [conn, lent] : lent_) {
    if (lent.generation != generation_) continue;
    const_cast<BackendConnection*>(conn)->stream().close();
    ++cut;
  }
  counters_.severed += cut;
  for (auto* watcher : down_watchers_) watcher->cancel();
  down_watchers_.clear();
  closeIdleAndWakeAll();  // waiters retry and see probe_down_
  spdlog::warn("backend {} ({}:{}) marked down by its health probes ({}): {} lent connections cut",
               config_->name, config_->address.host, config_->address.port, probe_down_, cut);
}

void BackendPool::markUp() {
  if (probe_down_.empty()) return;
  probe_down_.clear();
  ++counters_.up_transitions;
  // Whatever backoff a connect failure left is the probes' business now.
  backoff_ = std::chrono::milliseconds(0);
  down_until_ = {};
  spdlog::info("backend {} ({}:{}) answers its health probes again", config_->name, config_->address.host,
               config_->address.port);
}

std::unique_ptr<BackendConnection> BackendPool::takeIdle(uint32_t flavour, uint64_t preferred) {
  dropOlderThanConnectLimits();
  if (preferred != 0) {
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i]->serial() == preferred && idle_[i]->flavour() == flavour) {
        auto conn = std::move(idle_[i]);
        idle_.erase(idle_.begin() + static_cast<ptrdiff_t>(i));
        return conn;
      }
    }
  }
  for (size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i]->flavour() == flavour) {
      auto conn = std::move(idle_[i]);
      idle_.erase(idle_.begin() + static_cast<ptrdiff_t>(i));
      return conn;
    }
  }
  return nullptr;
}

void BackendPool::dropOlderThanConnectLimits() {
  // One atomic load per borrow; the idle list is swept once per change
  // (release() never pools a stale connection afterwards).
  const uint64_t limits = currentConnectLimitsEpoch();
  if (limits <= swept_limits_epoch_) return;
  swept_limits_epoch_ = limits;
  std::erase_if(idle_, [&](std::unique_ptr<BackendConnection>& conn) {
    if (conn->openedEpoch() >= limits) return false;
    conn->closeGracefully();
    --total_;
    ++counters_.replaced;
    return true;
  });
}

void BackendPool::noteConnectFailure(const BackendError& e) {
  ++counters_.connect_errors;
  if (Clock::now() >= down_until_) ++counters_.down_transitions;
  counters_.last_error = e.message;
  backoff_ = backoff_.count() == 0 ? kMinBackoff : std::min(backoff_ * 2, std::chrono::milliseconds(kMaxBackoff));
  down_until_ = Clock::now() + backoff_;
  spdlog::warn("backend {} ({}:{}) connect failed: {}; retry in {} ms", config_->name, config_->address.host,
               config_->address.port, e.message, backoff_.count());
}

void BackendPool::wakeOneWaiter(bool with_connection) {
  if (waiters_.empty()) return;
  Waiter* waiter = waiters_.front();
  waiters_.pop_front();
  waiter->woken = true;
  waiter->promised = with_connection;
  if (with_connection) ++promised_;
  waiter->timer.cancel();
}

void BackendPool::connectEnded() {
  --connecting_;
  if (total_ < max_size_ && connecting_ < max_connecting_ && Clock::now() >= server_full_until_) {
    wakeOneWaiter(false);
  }
}

std::unique_ptr<BackendConnection> BackendPool::lend(std::unique_ptr<BackendConnection> conn, uint32_t owner,
                                                     Clock::time_point asked) {
  counters_.wait_seconds.observe(std::chrono::duration<double>(Clock::now() - asked).count());
  const Lent lent{owner, conn->serverThreadId(), false, generation_};
  if (auto it = lent_.find(conn.get()); it != lent_.end()) {
    it->second = lent;
  } else if (spare_lent_.empty()) {
    lent_.emplace(conn.get(), lent);
  } else {
    LentMap::node_type node = std::move(spare_lent_.back());
    spare_lent_.pop_back();
    node.key() = conn.get();
    node.mapped() = lent;
    lent_.insert(std::move(node));
  }
  conn->noteLoan();
  return conn;
}

std::vector<uint32_t> BackendPool::markLentForKill(uint32_t owner) {
  std::vector<uint32_t> out;
  for (auto& [conn, lent] : lent_) {
    if (lent.owner != owner) continue;
    lent.kill_aimed = true;
    out.push_back(lent.thread_id);
  }
  return out;
}

awaitable<std::expected<std::unique_ptr<BackendConnection>, BackendError>> BackendPool::acquire(uint32_t flavour,
                                                                                                uint32_t owner,
                                                                                                uint64_t preferred) {
  flavour &= kPoolFlavourMask;
  const auto asked = Clock::now();
  const auto deadline = asked + kMaxWait;
  bool waited = false;
  bool my_turn = false;  // woken by a return: an idle connection is kept for this acquirer
  for (;;) {
    if (stopped_) co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "", "proxy is shutting down"});
    if (held_) {
      // A primary switch: wait for its end (bounded by the switch's own deadline).
      if (Clock::now() >= held_until_) {
        co_return std::unexpected(BackendError{BackendError::Kind::kSwitching, 0, "",
                                               "its primary is being switched (ha.switchover_timeout_ms passed)"});
      }
      asio::steady_timer timer(executor_);
      timer.expires_at(held_until_);
      hold_waiters_.push_back(&timer);
      auto alive = alive_;
      co_await timer.async_wait(kNoThrow);
      if (!*alive) co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "", "pool closed"});
      std::erase(hold_waiters_, &timer);
      continue;
    }
    // After the hold: a failover of a dead primary holds its statements
    // rather than failing them, and its repoint clears the mark.
    if (!probe_down_.empty()) co_return std::unexpected(downError());
    // Idle connections promised to woken waiters are not for newcomers.
    const bool may_take_idle = my_turn || idle_.size() > promised_;
    my_turn = false;
    if (auto conn = may_take_idle ? takeIdle(flavour, preferred) : nullptr) {
      auto idle_for = Clock::now() - conn->lastUsed();
      // Hot connections (reused within milliseconds) skip the check; one that
      // sat idle is peeked so a server restart is noticed before a statement
      // is lost on it.
      if (idle_for >= kPeekAfterIdle && conn->peerClosed()) {
        conn->stream().close();
        --total_;
        ++counters_.broken;
        continue;
      }
      if (idle_for < std::chrono::milliseconds(config_->ping_interval_ms)) co_return lend(std::move(conn), owner, asked);
      // Idle long enough that the server may have dropped it: check first.
      const uint64_t generation = generation_;
      auto alive = alive_;
      auto ping = co_await unlessMarkedDown(conn->command(protocol::Command::kPing, {}));
      if (!*alive) co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "", "pool closed"});
      if (!ping || generation != generation_) {
        // Marked down meanwhile (the ping is abandoned mid-exchange), or
        // repointed: a connection to the old server.
        conn->stream().close();
        --total_;
        continue;
      }
      if (*ping) co_return lend(std::move(conn), owner, asked);
      --total_;
      ++counters_.broken;
      continue;
    }
    const bool server_full = Clock::now() < server_full_until_;
    if (total_ < max_size_ && !server_full && connecting_ < max_connecting_) {
      if (Clock::now() < down_until_) {
        // Statements waiting for a connect slot would fail the same way:
        // tell the next one now (it passes it on), not at its deadline.
        wakeOneWaiter(false);
        co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "",
                                               "backend is down (" + counters_.last_error + ")"});
      }
      ++total_;
      ++connecting_;
      auto alive = alive_;
      auto config = config_;  // kept alive across the connect; a repoint may replace config_
      const uint64_t generation = generation_;
      auto opened = co_await unlessMarkedDown(BackendConnection::open(*config, flavour, max_packet_bytes_));
      if (!*alive) co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "", "pool closed"});
      if (!opened) {  // marked down while connecting: the loop answers with the reason
        --total_;
        connectEnded();
        continue;
      }
      auto conn = std::move(*opened);
      if (generation != generation_) {
        // Connected to the server the pool no longer points at: discard.
        --total_;
        connectEnded();
        if (conn) (*conn)->closeGracefully();
        continue;
      }
      if (!conn) {
        --total_;
        if (refusedForConnectionLimit(conn.error())) {
          // Full, not down (one refused connect must not fail every client):
          // wait for one of this pool's connections when it has any, else
          // answer with the server's own error; no backoff either way.
          ++counters_.connect_errors;
          counters_.last_error = conn.error().message;
          server_full_until_ = Clock::now() + kServerFullPause;
          connectEnded();
          if (total_ > 0) continue;
          co_return std::unexpected(conn.error());
        }
        noteConnectFailure(conn.error());
        --connecting_;
        wakeOneWaiter(false);  // no connection for it: it answers with the backoff's error, and passes it on
        co_return std::unexpected(conn.error());
      }
      connectEnded();
      ++counters_.connects;
      if (backoff_.count() != 0) ++counters_.up_transitions;
      backoff_ = std::chrono::milliseconds(0);
      down_until_ = {};
      co_return lend(std::move(*conn), owner, asked);
    }
    if ((total_ >= max_size_ || server_full) && idle_.size() > promised_) {
      // Full, but an idle connection of another flavour exists: replace it.
      idle_.erase(idle_.begin());
      --total_;
      continue;
    }
    if (Clock::now() >= deadline) {
      co_return std::unexpected(BackendError{BackendError::Kind::kPoolTimeout, 0, "",
          fmt::format("no free connection within {} s (pool max {})", kMaxWait.count(), max_size_)});
    }
    if (!waited) ++counters_.waits;
    waited = true;
    Waiter waiter(executor_);
    waiter.timer.expires_at(deadline);
    waiters_.push_back(&waiter);
    auto alive = alive_;
    co_await waiter.timer.async_wait(kNoThrow);
    if (!*alive) co_return std::unexpected(BackendError{BackendError::Kind::kDown, 0, "", "pool closed"});
    if (waiter.woken) {  // wakeOneWaiter() already took it off the queue
      if (waiter.promised) {
        --promised_;
        my_turn = true;
      }
    } else {
      std::erase(waiters_, &waiter);  // the deadline: still queued
    }
  }
}

void BackendPool::release(std::unique_ptr<BackendConnection> conn) {
  if (!conn) return;
  bool kill_aimed = false;
  bool old_server = false;
  if (auto it = lent_.find(conn.get()); it != lent_.end()) {
    kill_aimed = it->second.kill_aimed;
    old_server = it->second.generation != generation_;
    auto node = lent_.extract(it);
    if (spare_lent_.size() < kMaxSpareLentNodes) spare_lent_.push_back(std::move(node));
  }
  // A connection of the no-database flavour that got one (USE) cannot give it up.
  const bool database_stuck = (conn->flavour() & kNoDatabase) && !conn->applied().database.empty();
  // Logged in before a SET GLOBAL of a connect-time limit: global_defaults.hpp.
  const bool stale_limits = conn->openedEpoch() < currentConnectLimitsEpoch();
  if (stopped_ || draining_ || kill_aimed || old_server || conn->broken() || !conn->stream().isOpen() || database_stuck ||
      stale_limits) {
    if (conn->broken()) ++counters_.broken;
    else if (stale_limits) ++counters_.replaced;
    conn->closeGracefully();
    --total_;
  } else {
    conn->touch();
    idle_.push_back(std::move(conn));
  }
  wakeOneWaiter();
}

void BackendPool::hold(Clock::time_point until) {
  held_ = true;
  held_until_ = until;
}

void BackendPool::releaseHold() {
  held_ = false;
  for (auto* timer : hold_waiters_) timer->cancel();
  hold_waiters_.clear();
}

void BackendPool::repoint(conf::BackendConfig config, bool sever_lent) {
  if (sever_lent) {
    // Lent connections are alive until their borrower releases them (every
    // borrower does, on this thread); closing the socket fails the
    // borrower's pending read or write at once.
    for (auto& [conn, lent] : lent_) const_cast<BackendConnection*>(conn)->stream().close();
  }
  config.name = config_->name;  // looked up by the backend's name, whichever server serves it
  previous_configs_.push_back(std::move(config_));
  config_ = std::make_shared<const conf::BackendConfig>(std::move(config));
  ++generation_;
  for (auto& c : idle_) c->closeGracefully();
  total_ -= static_cast<uint32_t>(idle_.size());
  idle_.clear();
  // The new server owes the pool nothing: no backoff from the old one's failures.
  backoff_ = std::chrono::milliseconds(0);
  down_until_ = {};
  server_full_until_ = {};
  counters_.last_error.clear();
  probe_down_.clear();
  for (auto* watcher : down_watchers_) watcher->cancel();  // connects to the old server: retried on the new one
  down_watchers_.clear();
  while (!waiters_.empty()) wakeOneWaiter();
}

void BackendPool::updateConfig(conf::BackendConfig config) {
  config.name = config_->name;
  previous_configs_.push_back(std::move(config_));
  config_ = std::make_shared<const conf::BackendConfig>(std::move(config));
}

void BackendPool::start() {
  asio::co_spawn(executor_, maintain(), asio::detached);
}

void BackendPool::closeIdleAndWakeAll() {
  for (auto& c : idle_) c->closeGracefully();
  total_ -= static_cast<uint32_t>(idle_.size());
  idle_.clear();
  while (!waiters_.empty()) wakeOneWaiter();
}

void BackendPool::stop() {
  stopped_ = true;
  releaseHold();
  closeIdleAndWakeAll();  // waiters see stopped_ and fail
}

void BackendPool::drain() {
  draining_ = true;
  closeIdleAndWakeAll();  // waiters retry at once; with the idle list gone they open their own
}

awaitable<void> BackendPool::pingIdle(Clock::time_point now) {
  // Take the connections due for a ping out of the idle list so no session borrows them meanwhile.
  std::vector<std::unique_ptr<BackendConnection>> due;
  auto ping_after = std::chrono::milliseconds(config_->ping_interval_ms);
  for (size_t i = idle_.size(); i-- > 0;) {
    if (now - idle_[i]->lastUsed() >= ping_after) {
      due.push_back(std::move(idle_[i]));
      idle_.erase(idle_.begin() + static_cast<ptrdiff_t>(i));
    }
  }
  auto alive = alive_;
  const uint64_t generation = generation_;
  for (auto& c : due) {
    auto r = co_await c->command(protocol::Command::kPing, {});
    if (!*alive) co_return;
    if (!r || generation != generation_) c->markBroken();  // broken, or to a server the pool left
    release(std::move(c));
  }
}

awaitable<void> BackendPool::maintain() {
  auto alive = alive_;
  asio::steady_timer timer(executor_);
  while (!stopped_ && !draining_) {
    timer.expires_after(kMaintenancePeriod);
    co_await timer.async_wait(kNoThrow);
    if (!*alive || stopped_ || draining_) co_return;
    auto now = Clock::now();
    // Idle timeout: close the least recently used above the minimum.
    auto idle_limit = std::chrono::milliseconds(config_->idle_timeout_ms);
    while (total_ > min_size_ && !idle_.empty() && now - idle_.front()->lastUsed() > idle_limit) {
      idle_.front()->closeGracefully();
      idle_.erase(idle_.begin());
      --total_;
    }
    co_await pingIdle(now);
    if (!*alive || stopped_) co_return;
    while (total_ < min_size_ && Clock::now() >= down_until_ && !held_ && probe_down_.empty()) {
      ++total_;
      auto config = config_;
      const uint64_t generation = generation_;
      auto conn = co_await BackendConnection::open(*config, 0, max_packet_bytes_);
      if (!*alive) co_return;
      if (generation != generation_) {
        --total_;
        if (conn) (*conn)->closeGracefully();
        break;
      }
      if (!conn) {
        --total_;
        if (refusedForConnectionLimit(conn.error())) {
          server_full_until_ = Clock::now() + kServerFullPause;
          break;  // the warm minimum waits; the server is full, not down
        }
        noteConnectFailure(conn.error());
        break;
      }
      ++counters_.connects;
      if (backoff_.count() != 0) ++counters_.up_transitions;
      backoff_ = std::chrono::milliseconds(0);
      release(std::move(*conn));
    }
  }
}

PoolStats BackendPool::stats() const {
  PoolStats s = counters_;
  s.total = total_;
  s.idle = static_cast<uint32_t>(idle_.size());
  s.in_use = total_ - s.idle;
  s.waiting = static_cast<uint32_t>(waiters_.size());
  s.down = Clock::now() < down_until_ || !probe_down_.empty();
  s.probe_down = probe_down_;
  if (!probe_down_.empty()) s.last_error = "health probes: " + probe_down_;
  return s;
}

}  // namespace sp::proxy
