// A worker thread: one io_context, its own listening socket (SO_REUSEPORT, so
// the kernel spreads new connections over workers), its own backend pools,
// and the client sessions it accepted. Nothing here is shared with other
// workers except ProxyContext, so the hot path takes no locks.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>

#include "proxy/net/async_gate.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/kill_execution.hpp"
#include "proxy/net/net.hpp"
#include "proxy/backend/pool_host.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/observe/statement_observer.hpp"
#include "proxy/session/process_row.hpp"
#include "routing/access_cache.hpp"
#include "routing/plan_cache.hpp"

namespace sp::proxy {

class ClientSession;

class Worker final : public PoolHost {
 public:
  Worker(ProxyContext& context, unsigned index, unsigned worker_count);
  ~Worker();

  // Binds the listener; returns an error message on failure.
  std::string listen(const tcp::endpoint& endpoint);
  void start();            // starts the thread
  void beginShutdown();    // stop accepting; close idle sessions (thread-safe)
  void stop();             // stop the io_context (thread-safe)
  void join();

  asio::io_context& io() { return io_; }
  ProxyContext& context() { return context_; }
  BackendPool* pool(std::string_view name);
  BackendPool* defaultPool() { return default_pool_; }
  // The pools of a backend's replicas (backends[].replicas), in config
  // order; empty when it lists none.
  std::span<const std::unique_ptr<BackendPool>> replicaPools(std::string_view backend) const;
  // Per-thread plan cache (not thread-safe by design: no locks on the hot path).
  routing::PlanCache& planCache() { return plan_cache_; }
  // Per-thread "may run" verdicts of the statement policy (routing/access_cache.hpp).
  routing::AccessVerdictCache& accessCache() { return access_cache_; }
  // Statements that borrow several connections at once (scatter, split
  // writes) borrow them one statement at a time (see async_gate.hpp).
  AsyncGate& multiShardGate() { return multi_shard_gate_; }

  // KILL [QUERY] of one of this worker's sessions, on this worker's thread
  // (client_kill.cpp sends it here). Finds the session, checks that `user`
  // owns it, marks the backend connections lent to it so none goes back to a
  // pool, closes the client connection unless `query_only`, and returns the
  // server threads that run its statement now (none when it is idle).
  using KillTarget = proxy::KillTarget;  // kill_execution.hpp
  struct KillAim {
    enum class Result : uint8_t { kNoSuchSession, kNotOwner, kAimed } result = Result::kNoSuchSession;
    std::vector<KillTarget> running;  // kAimed: KILL QUERY these
  };
  KillAim aimKill(uint32_t connection_id, std::string_view user, bool query_only);

  // Backend changes from a shard-map reload (shard_map_manager.cpp). Call on
  // this worker's thread. addPool starts a pool for a backend that has none;
  // retirePool takes a pool out of lookups by the new map and drains it: a
  // statement planned on the previous map can still borrow from it, and its
  // connections close as their borrowers return them.
  void addPool(const conf::BackendConfig& config);
  void retirePool(std::string_view name);
  using PoolSnapshot = proxy::PoolSnapshot;  // pool_host.hpp
  std::vector<PoolSnapshot> poolSnapshots() const;
  // PoolHost: the same, from another thread (the shard-map publisher).
  unsigned index() const override { return index_; }
  bool changePools(const std::vector<std::string>& retire, const std::vector<conf::BackendConfig>& add) override;
  std::optional<std::vector<PoolSnapshot>> snapshotPools() override;
  bool holdBackend(const std::string& backend, std::chrono::steady_clock::time_point until) override;
  std::optional<uint32_t> busyConnections(const std::string& backend) override;
  std::optional<uint32_t> repointBackend(const std::string& backend, const conf::BackendConfig* primary,
                                         const std::vector<conf::BackendConfig>& replicas, bool sever) override;
  bool releaseBackend(const std::string& backend) override;
  bool markServer(const std::string& address, const std::string& down_reason) override;

  // Statement metrics, digests and the slow-query log of this worker's sessions.
  StatementObserver& observer() { return observer_; }
  // What the metrics endpoint reads, copied on this worker's thread.
  struct Observation {
    WorkerMetrics metrics;
    std::vector<PoolSnapshot> pools;
    uint64_t plan_cache_hits = 0, plan_cache_misses = 0, plan_cache_evictions = 0, plan_cache_entries = 0;
    uint64_t digest_entries = 0, digest_evictions = 0;
    uint32_t sessions = 0, authenticated = 0, in_transaction = 0, pinned = 0;
    std::map<std::string, uint32_t> users;  // logged-in sessions per user
  };
  Observation observe() const;
  // The statement latency histogram of each backend (cumulative), copied on
  // this worker's thread: what background work yields to.
  std::vector<std::pair<std::string, Histogram>> backendLatencies() const;

  // SHOW PROCESSLIST: this worker's logged-in sessions of `user` (empty:
  // every user's). Call on this worker's thread.
  std::vector<ProcessRow> processRows(std::string_view user, bool full) const;

  void add(ClientSession* s) { sessions_.insert(s); }
  void remove(ClientSession* s) { sessions_.erase(s); }
  size_t sessionCount() const { return sessions_.size(); }

 private:
  awaitable<void> acceptLoop();
  // Closes sessions idle longer than server.wait_timeout_s, once a second.
  awaitable<void> idleSweep();
  void refuse(tcp::socket socket, std::string message);

  ProxyContext& context_;
  unsigned index_;
  unsigned worker_count_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::map<std::string, std::unique_ptr<BackendPool>, std::less<>> pools_;
  BackendPool* default_pool_ = nullptr;
  // Replicas' pools by backend name: never in pools_, so a reload's pool
  // changes (by backend name) leave them alone.
  std::map<std::string, std::vector<std::unique_ptr<BackendPool>>, std::less<>> replica_pools_;
  // Retired by a reload; kept alive because sessions may still hold a
  // connection (and a reference) from them until they give it back.
  std::vector<std::unique_ptr<BackendPool>> retired_pools_;
  std::unordered_set<ClientSession*> sessions_;
  routing::PlanCache plan_cache_;
  routing::AccessVerdictCache access_cache_;
  StatementObserver observer_;
  AsyncGate multi_shard_gate_{io_.get_executor()};
  std::thread thread_;
};

// Runs `fn` on the worker's thread and waits for it (bounded: false when the
// worker does not answer within `timeout`, e.g. during shutdown; `fn` must
// then not refer to the caller's frame, so share what it writes).
bool runOnWorker(Worker& worker, std::function<void()> fn,
                 std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace sp::proxy
