// A pool of connections to one backend, owned by one worker thread (so it
// needs no locks, as in Envoy's per-worker pools). Idle connections are reused
// most-recently-used first; when the pool is full, acquirers wait; a backend
// that fails to connect is marked down and retried with exponential backoff,
// so clients fail fast instead of piling up on a dead server.
#pragma once
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "conf/backend_config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/observe/metrics.hpp"

namespace sp::proxy {

struct PoolStats {
  uint32_t total = 0;      // open + opening connections
  uint32_t idle = 0;
  uint32_t in_use = 0;
  uint32_t max = 0;
  uint64_t connects = 0;
  uint64_t connect_errors = 0;
  uint64_t broken = 0;     // connections discarded because they broke or were left dirty
  uint64_t replaced = 0;   // closed because a connect-time limit changed since their login (global_defaults.hpp)
  uint64_t waits = 0;      // acquisitions that had to wait for a free connection
  uint32_t waiting = 0;    // acquirers waiting now
  uint64_t down_transitions = 0;  // times a connect failure marked the backend down (it was up)
  uint64_t up_transitions = 0;    // times a connect succeeded while it was marked down
  uint64_t replica_reads = 0;     // a replica's pool: statements sessions sent here as replica reads
  Histogram wait_seconds{kPoolWaitBounds};  // every successful acquisition: time until lent
  bool down = false;
  std::string last_error;
  // The health monitor says the server does not answer (markDown): lending
  // fails at once, with this reason. Empty while it answers.
  std::string probe_down;
  uint64_t severed = 0;  // lent connections cut because the monitor marked the server down
};

class BackendPool {
 public:
  using Clock = std::chrono::steady_clock;
  BackendPool(asio::any_io_executor executor, conf::BackendConfig config, uint32_t max_size,
              uint32_t min_size, size_t max_packet_bytes);
  ~BackendPool();

  // The server the pool lends connections to now. A repoint() (a primary
  // switch) replaces it; the previous ones stay allocated (statements that
  // ran on them may still hold a reference), one per switch.
  const conf::BackendConfig& config() const { return *config_; }
  const std::string& name() const { return config_->name; }

  // `owner` is the client connection id the connection is lent to (for KILL).
  // `preferred`: the serial of an idle connection to lend rather than the
  // most recently used one, when it is idle (0: none) — a session's own
  // connection that still holds its state (LAST_INSERT_ID).
  awaitable<std::expected<std::unique_ptr<BackendConnection>, BackendError>> acquire(uint32_t flavour,
                                                                                     uint32_t owner,
                                                                                     uint64_t preferred = 0);
  // Returns a connection. Broken connections, and connections a KILL aimed
  // at, are closed instead of pooled.
  void release(std::unique_ptr<BackendConnection> conn);

  // KILL support: the server thread ids of the connections lent to `owner`,
  // each marked so it is closed, never pooled, when it comes back: once the
  // KILL is sent, the thread id must not be serving another client.
  std::vector<uint32_t> markLentForKill(uint32_t owner);

  // Starts the maintenance loop (idle timeout, health pings, minimum size).
  void start();
  // Shutdown: no more lending; connections are closed as they come back.
  void stop();
  // Removed by a reload: keeps lending (a statement planned on the previous map
  // may still ask for it by name) but keeps nothing idle and stops maintenance,
  // so the pool empties as its last borrowers return their connections.
  void drain();
  PoolStats stats() const;
  // A primary switch (docs/availability.md, proxy/ha/). hold(): acquirers
  // wait (lending nothing new) until releaseHold() or `until`, then fail with
  // kSwitching; connections already lent stay lent. lent(): connections out
  // on loan now. repoint(): the pool lends connections to another server
  // from now on: idle ones are closed, lent ones are closed when they come
  // back, connects in progress to the previous server are discarded.
  void hold(Clock::time_point until);
  void releaseHold();
  bool held() const { return held_; }
  uint32_t lent() const { return static_cast<uint32_t>(lent_.size()); }
  // `sever_lent`: also close the sockets of the connections lent now (a
  // failover: a statement stuck on a hung old primary must fail, not be
  // acknowledged later by a server that is no longer the primary).
  void repoint(conf::BackendConfig config, bool sever_lent = false);
  // The same server, other settings (its replicas after a REJOIN): nothing is closed.
  void updateConfig(conf::BackendConfig config);
  uint64_t generation() const { return generation_; }
  // In connect backoff now (a failed connect): lending would fail fast.
  bool inBackoff() const { return Clock::now() < down_until_; }
  void noteReplicaRead() { ++counters_.replica_reads; }
  // The health monitor's verdict on the server the pool lends to now
  // (docs/availability.md, "A server that stops answering"). markDown: the
  // probes failed for ha.failure_timeout_ms. Connections lent now are cut
  // (their statements fail at once instead of waiting for a hung server;
  // they come back closed, never pooled), idle ones closed, acquirers
  // waiting for a connection, a connect or a ping fail with kDown, and new
  // ones fail at once until markUp() (a probe answered). A repoint() (a
  // failover: another server) clears it.
  void markDown(std::string reason);
  void markUp();
  const std::string& probeDown() const { return probe_down_; }
  uint32_t maxSize() const { return max_size_; }

 private:
  awaitable<void> maintain();
  awaitable<void> pingIdle(Clock::time_point now);
  std::unique_ptr<BackendConnection> takeIdle(uint32_t flavour, uint64_t preferred);
  void noteConnectFailure(const BackendError& e);
  void dropOlderThanConnectLimits();
  // Wakes the first waiter. `with_connection`: a returned connection is kept
  // for it (promised_); otherwise it is woken to open one (a connect slot
  // came free under backends[].max_connecting).
  void wakeOneWaiter(bool with_connection = true);
  // A connect of acquire() ended (whatever its outcome, after total_ says it).
  void connectEnded();
  void closeIdleAndWakeAll();
  // Waits for `op` or markDown(), whichever first: nullopt when markDown()
  // came first (the server does not answer; `op` is cancelled).
  template <class T>
  awaitable<std::optional<T>> unlessMarkedDown(awaitable<T> op);
  BackendError downError() const;

  asio::any_io_executor executor_;
  std::shared_ptr<const conf::BackendConfig> config_;
  std::vector<std::shared_ptr<const conf::BackendConfig>> previous_configs_;
  uint32_t max_size_;
  uint32_t min_size_;
  size_t max_packet_bytes_;
  std::unique_ptr<BackendConnection> lend(std::unique_ptr<BackendConnection> conn, uint32_t owner,
                                         Clock::time_point asked);

  struct Lent {
    uint32_t owner = 0;
    uint32_t thread_id = 0;
    bool kill_aimed = false;
    uint64_t generation = 0;  // the pool's generation when lent: older ones are closed on return
  };
  std::vector<std::unique_ptr<BackendConnection>> idle_;
  // Connections out on loan, by address (never dereferenced through here).
  using LentMap = std::unordered_map<const BackendConnection*, Lent>;
  LentMap lent_;
  // Nodes of returned loans, reused by lend(): no allocation per loan.
  std::vector<LentMap::node_type> spare_lent_;
  // An acquirer waiting for a connection: its timer ends the wait (the
  // deadline, or cancel() from wakeOneWaiter), `woken` says which.
  struct Waiter {
    explicit Waiter(const asio::any_io_executor& executor) : timer(executor) {}
    asio::steady_timer timer;
    bool woken = false;
    bool promised = false;  // woken with a connection kept for it
  };
  // First come, first served.
  std::deque<Waiter*> waiters_;
  // Waiters woken but not yet run: the connections returned for them are
  // theirs. Without it a statement arriving between the return and the
  // waiter's turn takes the connection, and the waiter queues again at the
  // back (at 1,000 clients on a pool of 64, most waiters lost their turn
  // several times, each time another timer and another scan of the queue).
  uint32_t promised_ = 0;
  // Connects (TCP + login) acquire() has in flight, and how many it may:
  // this pool's share of backends[].max_connecting. A thousand clients
  // arriving at an empty pool would otherwise start a thousand logins at
  // once; those beyond what the server answers within connect_timeout_ms
  // fail, and a failed connect marks the backend down for its backoff, so
  // a burst of clients became an outage. The others wait for a connection
  // returned or a connect slot, as for a full pool.
  uint32_t connecting_ = 0;
  uint32_t max_connecting_ = 1;
  // Acquirers connecting or pinging now: markDown() cancels them.
  std::vector<asio::steady_timer*> down_watchers_;
  std::string probe_down_;
  uint32_t total_ = 0;
  bool stopped_ = false;
  bool draining_ = false;
  bool held_ = false;
  Clock::time_point held_until_{};
  std::vector<asio::steady_timer*> hold_waiters_;
  uint64_t generation_ = 0;  // repoint()s so far
  uint64_t swept_limits_epoch_ = 0;  // dropOlderThanConnectLimits() ran for this epoch
  Clock::time_point down_until_{};
  Clock::time_point server_full_until_{};  // the server refused a connect for lack of connections
  std::chrono::milliseconds backoff_{0};
  PoolStats counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sp::proxy
