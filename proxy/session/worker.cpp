#include "proxy/session/worker.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <future>

#include "conf/config.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/handshake.hpp"
#include "proxy/observe/abuse_log.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"

namespace sp::proxy {

namespace {
using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

uint32_t share(uint32_t total, unsigned workers) {
  return total == 0 ? 0 : std::max<uint32_t>(1, (total + workers - 1) / workers);
}
}  // namespace

Worker::Worker(ProxyContext& context, unsigned index, unsigned worker_count)
    : context_(context), index_(index), worker_count_(worker_count),
      observer_(observerSettings(context, worker_count)) {
  const auto& cfg = context_.config();
  // The roles in force (a switchover before a restart is remembered), else the config's.
  const auto topology = context_.topology.load();
  for (const auto& b : cfg.backends) {
    conf::BackendConfig primary = b;
    if (topology) {
      if (auto now = primaryPoolConfig(cfg, *topology, b.name)) primary = std::move(*now);
    }
    auto pool = std::make_unique<BackendPool>(io_.get_executor(), primary, share(b.max_connections, worker_count),
                                              share(b.min_connections, worker_count), cfg.server.max_packet_bytes);
    if (b.name == cfg.default_backend) default_pool_ = pool.get();
    pools_.emplace(b.name, std::move(pool));
    std::vector<conf::BackendConfig> replicas;
    if (topology) {
      replicas = replicaLogins(cfg, *topology, b.name);
    } else {
      for (const auto& r : b.replicas) replicas.push_back(*serverLogin(b, r.name));
    }
    for (auto& server : replicas) {
      const uint32_t max = share(server.max_connections, worker_count);
      replica_pools_[b.name].push_back(
          std::make_unique<BackendPool>(io_.get_executor(), std::move(server), max, 0, cfg.server.max_packet_bytes));
    }
  }
  plan_cache_.setMaxBytes(cfg.limits.max_plan_cache_bytes / std::max(worker_count, 1u));
}

Worker::~Worker() {
  stop();
  join();
}

std::span<const std::unique_ptr<BackendPool>> Worker::replicaPools(std::string_view backend) const {
  auto it = replica_pools_.find(backend);
  if (it == replica_pools_.end()) return {};
  return it->second;
}

BackendPool* Worker::pool(std::string_view name) {
  auto it = pools_.find(name);
  if (it != pools_.end()) return it->second.get();
  // A transaction that started under an older map may still name a backend a
  // reload removed: its pinned connection comes from the retired pool.
  for (auto r = retired_pools_.rbegin(); r != retired_pools_.rend(); ++r) {
    if ((*r)->name() == name) return r->get();
  }
  return nullptr;
}

void Worker::addPool(const conf::BackendConfig& b) {
  if (pools_.contains(b.name)) return;
  auto pool = std::make_unique<BackendPool>(io_.get_executor(), b, share(b.max_connections, worker_count_),
                                            share(b.min_connections, worker_count_),
                                            context_.config().server.max_packet_bytes);
  pool->start();
  pools_.emplace(b.name, std::move(pool));
}

void Worker::retirePool(std::string_view name) {
  auto it = pools_.find(name);
  if (it == pools_.end() || it->second.get() == default_pool_) return;
  it->second->drain();
  retired_pools_.push_back(std::move(it->second));
  pools_.erase(it);
}

Worker::KillAim Worker::aimKill(uint32_t connection_id, std::string_view user, bool query_only) {
  KillAim aim;
  ClientSession* session = nullptr;
  for (auto* s : sessions_) {
    if (s->connectionId() == connection_id) session = s;
  }
  if (session == nullptr) return aim;
  if (session->user() != user) {
    aim.result = KillAim::Result::kNotOwner;
    return aim;
  }
  aim.result = KillAim::Result::kAimed;
  if (query_only && session->idle()) return aim;  // nothing is running
  const bool running = !session->idle();
  auto aimAt = [&](BackendPool& pool) {
    for (uint32_t thread_id : pool.markLentForKill(connection_id)) {
      if (running) aim.running.push_back(KillTarget{pool.config(), thread_id});
    }
  };
  for (auto& [name, pool] : pools_) aimAt(*pool);
  for (auto& pool : retired_pools_) aimAt(*pool);
  for (auto& [name, group] : replica_pools_) {
    for (auto& pool : group) aimAt(*pool);
  }
  if (running) session->interruptAdmission();  // waiting for a server's budget: ends now (1317)
  if (!query_only) session->kill();
  return aim;
}

bool Worker::changePools(const std::vector<std::string>& retire, const std::vector<conf::BackendConfig>& add) {
  return runOnWorker(*this, [this, retire, add] {
    for (const auto& name : retire) retirePool(name);
    for (const auto& b : add) addPool(b);
  });
}

bool Worker::holdBackend(const std::string& backend, std::chrono::steady_clock::time_point until) {
  return runOnWorker(*this, [this, backend, until] {
    if (auto it = pools_.find(backend); it != pools_.end()) it->second->hold(until);
  });
}

std::optional<uint32_t> Worker::busyConnections(const std::string& backend) {
  auto busy = std::make_shared<uint32_t>(0);
  if (!runOnWorker(*this, [this, backend, busy] {
        auto it = pools_.find(backend);
        if (it == pools_.end()) return;
        BackendPool* pool = it->second.get();
        uint32_t parked = 0;
        for (auto* s : sessions_) {
          if (s->pinnedPool() == pool && s->idle() && !s->inTransaction()) ++parked;
        }
        *busy = pool->lent() > parked ? pool->lent() - parked : 0;
      })) {
    return std::nullopt;
  }
  return *busy;
}

std::optional<uint32_t> Worker::repointBackend(const std::string& backend, const conf::BackendConfig* primary,
                                               const std::vector<conf::BackendConfig>& replicas, bool sever) {
  auto closed = std::make_shared<uint32_t>(0);
  std::optional<conf::BackendConfig> new_primary;
  if (primary) new_primary = *primary;
  if (!runOnWorker(*this, [this, backend, new_primary, replicas, closed, sever] {
        auto it = pools_.find(backend);
        if (it == pools_.end()) return;
        BackendPool* pool = it->second.get();
        if (new_primary) {
          pool->repoint(*new_primary, sever);
          // Sessions idle on a pinned connection to the old primary: their
          // state (user variables, temporary tables, locks) lives there and
          // cannot follow; closed like a server restart would close them.
          for (auto* s : sessions_) {
            if (s->pinnedPool() == pool) {
              s->kill();
              ++*closed;
            }
          }
        } else {
          // The primary stays; only the replicas the sessions read from change.
          conf::BackendConfig same = pool->config();
          same.replicas.clear();
          for (const auto& r : replicas) same.replicas.push_back({r.name, r.address, r.user, r.password, r.max_active_statements});
          pool->updateConfig(std::move(same));
        }
        auto& group = replica_pools_[backend];
        for (auto& old : group) {
          old->drain();
          retired_pools_.push_back(std::move(old));
        }
        group.clear();
        const auto& cfg = context_.config();
        for (const auto& server : replicas) {
          auto replica = std::make_unique<BackendPool>(io_.get_executor(), server,
                                                       share(server.max_connections, worker_count_), 0,
                                                       cfg.server.max_packet_bytes);
          replica->start();
          group.push_back(std::move(replica));
        }
      })) {
    return std::nullopt;
  }
  return *closed;
}

bool Worker::releaseBackend(const std::string& backend) {
  return runOnWorker(*this, [this, backend] {
    if (auto it = pools_.find(backend); it != pools_.end()) it->second->releaseHold();
  });
}

bool Worker::markServer(const std::string& address, const std::string& down_reason) {
  return runOnWorker(*this, [this, address, down_reason] {
    auto mark = [&](BackendPool& pool) {
      if (conf::formatHostPort(pool.config().address) != address) return;
      if (down_reason.empty()) pool.markUp();
      else pool.markDown(down_reason);
    };
    for (auto& [name, pool] : pools_) mark(*pool);
    for (auto& [backend, group] : replica_pools_) {
      for (auto& pool : group) mark(*pool);
    }
    // Retired pools still lend to plans made on the previous map.
    for (auto& pool : retired_pools_) mark(*pool);
  });
}

std::optional<std::vector<PoolSnapshot>> Worker::snapshotPools() {
  // Shared: a worker that answers after the timeout must not write into a dead frame.
  auto snaps = std::make_shared<std::vector<PoolSnapshot>>();
  if (!runOnWorker(*this, [this, snaps] { *snaps = poolSnapshots(); })) return std::nullopt;
  return std::move(*snaps);
}

std::vector<Worker::PoolSnapshot> Worker::poolSnapshots() const {
  std::vector<PoolSnapshot> out;
  for (const auto& [name, pool] : pools_) {
    out.push_back({name, conf::formatHostPort(pool->config().address), pool->stats(), false, false, name});
  }
  for (const auto& [backend, group] : replica_pools_) {
    for (const auto& pool : group) {
      out.push_back({pool->name(), conf::formatHostPort(pool->config().address), pool->stats(), false, true, backend});
    }
  }
  for (const auto& pool : retired_pools_) {
    // A retired pool stays allocated (a plan may still name it) but is listed
    // only while it has connections out.
    if (pool->stats().total == 0) continue;
    out.push_back({pool->name(), conf::formatHostPort(pool->config().address), pool->stats(), true, false, pool->name()});
  }
  return out;
}

std::vector<std::pair<std::string, Histogram>> Worker::backendLatencies() const {
  std::vector<std::pair<std::string, Histogram>> out;
  for (const auto& b : observer_.metrics().backends) out.emplace_back(b.backend, b.latency);
  return out;
}

Worker::Observation Worker::observe() const {
  Observation o;
  o.metrics = observer_.metrics();
  o.pools = poolSnapshots();
  o.plan_cache_hits = plan_cache_.hits();
  o.plan_cache_misses = plan_cache_.misses();
  o.plan_cache_evictions = plan_cache_.evictions();
  o.plan_cache_entries = plan_cache_.size();
  o.digest_entries = observer_.digests().size();
  o.digest_evictions = observer_.digests().evictions();
  for (const auto* s : sessions_) {
    ++o.sessions;
    if (!s->user().empty()) {
      ++o.authenticated;
      ++o.users[s->user()];
    }
    if (s->inTransaction()) ++o.in_transaction;
    if (s->pinned()) ++o.pinned;
  }
  return o;
}

bool runOnWorker(Worker& worker, std::function<void()> fn, std::chrono::milliseconds timeout) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(fn));
  auto done = task->get_future();
  asio::post(worker.io(), [task] { (*task)(); });
  return done.wait_for(timeout) == std::future_status::ready;
}

std::string Worker::listen(const tcp::endpoint& endpoint) {
  error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.set_option(ReusePort(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  return ec ? ec.message() : std::string();
}

void Worker::start() {
  for (auto& [name, pool] : pools_) pool->start();
  for (auto& [name, group] : replica_pools_) {
    for (auto& pool : group) pool->start();
  }
  asio::co_spawn(io_, acceptLoop(), asio::detached);
  asio::co_spawn(io_, idleSweep(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

void Worker::beginShutdown() {
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    // Copy: closing a session may remove it from the set.
    std::vector<ClientSession*> sessions(sessions_.begin(), sessions_.end());
    for (auto* s : sessions) s->closeIfIdle();
  });
}

void Worker::stop() {
  asio::post(io_, [this] {
    for (auto& [name, pool] : pools_) pool->stop();
    for (auto& pool : retired_pools_) pool->stop();
    for (auto& [name, group] : replica_pools_) {
      for (auto& pool : group) pool->stop();
    }
    io_.stop();
  });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

awaitable<void> Worker::acceptLoop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      spdlog::warn("accept failed: {}", ec.message());
      if (ec == asio::error::no_descriptors) {
        asio::steady_timer t(io_);
        t.expires_after(std::chrono::milliseconds(100));
        co_await t.async_wait(kNoThrow);
      }
      continue;
    }
    const auto& server = context_.config().server;
    if (context_.sessions.load() >= server.max_connections) {
      context_.refused_max_connections.fetch_add(1, std::memory_order_relaxed);
      noteAbuse(AbuseKind::kMaxConnections, fmt::format("{} sessions open", context_.sessions.load()));
      refuse(std::move(socket), "Too many connections");
      continue;
    }
    error_code peer_ec;
    const std::string host = socket.remote_endpoint(peer_ec).address().to_string();
    auto slot = context_.hosts.tryAcquire(peer_ec ? std::string("unknown") : host, server.max_connections_per_host);
    if (!slot) {
      context_.refused_per_host.fetch_add(1, std::memory_order_relaxed);
      noteAbuse(AbuseKind::kPerHost, fmt::format("host {}", host));
      refuse(std::move(socket), fmt::format("Too many connections from host '{}' (server.max_connections_per_host {})",
                                            host, server.max_connections_per_host));
      continue;
    }
    uint32_t id = context_.next_connection_id.fetch_add(1);
    auto session = std::make_shared<ClientSession>(*this, std::move(socket), id);
    // The host slot lives in this coroutine: released when the session ends.
    asio::co_spawn(io_, [session, slot = std::move(*slot)]() -> awaitable<void> { co_await session->run(); },
                   asio::detached);
  }
}

// Each session's own limit: its wait_timeout (server.wait_timeout_s or
// interactive_timeout_s at login, then whatever it SET; idle_timeout.hpp).
// A sweep instead of a timer per session: arming and cancelling a timer on
// every command would cost each statement; one pass a second over this
// worker's sessions costs nothing measurable. As MariaDB 10.11 does at
// wait_timeout, the connection is closed without an error packet (the
// client sees 2013/2006 on its next statement); an open transaction is
// rolled back like on any disconnect.
awaitable<void> Worker::idleSweep() {
  asio::steady_timer timer(io_);
  for (;;) {
    timer.expires_after(std::chrono::seconds(1));
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    const auto now = std::chrono::steady_clock::now();
    std::vector<ClientSession*> expired;  // kill() may remove a session from the set
    for (auto* s : sessions_) {
      if (s->idle() && now - s->idleSince() >= s->idleLimit()) expired.push_back(s);
    }
    for (auto* s : expired) {
      context_.idle_timeouts.fetch_add(1, std::memory_order_relaxed);
      noteAbuse(AbuseKind::kIdleTimeout, fmt::format("connection {} of user {} (wait_timeout {} s)", s->connectionId(),
                                                      s->user(), s->idleLimit().count()));
      s->kill();
    }
    // A client that stops reading while it is sent an answer would hold the
    // backend connections streaming it (and their rows) for ever: closed
    // after server.net_write_timeout_s, as MariaDB aborts a write that
    // waits longer than net_write_timeout. The execution sees its client
    // gone and closes the backend connections it left mid-answer.
    const std::chrono::seconds write_limit(context_.config().server.net_write_timeout_s);
    std::vector<ClientSession*> stalled;
    for (auto* s : sessions_) {
      auto since = s->writeWaitingSince();
      if (since && now - *since >= write_limit) stalled.push_back(s);
    }
    for (auto* s : stalled) {
      context_.write_timeouts.fetch_add(1, std::memory_order_relaxed);
      noteAbuse(AbuseKind::kWriteTimeout, fmt::format("connection {} of user {} took no answer bytes for {} s",
                                                      s->connectionId(), s->user(), write_limit.count()));
      s->kill();
    }
  }
}

// Refuses before the handshake, as MariaDB does: a lone ERR 1040 packet, then close.
void Worker::refuse(tcp::socket socket, std::string message) {
  auto conn = std::make_shared<PacketStream>(std::move(socket), 1024);
  protocol::Bytes payload;
  protocol::encode(client_error::make(client_error::kTooManyConnections, std::move(message)), payload);
  conn->append(payload, 0);
  asio::co_spawn(io_, [conn]() -> awaitable<void> { co_await conn->flush(); conn->close(); }, asio::detached);
}

}  // namespace sp::proxy
