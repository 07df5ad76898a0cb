// The shard-map lifecycle (docs/operations.md, docs/admin.md): start-up from
// the map file or the SQLite cache, RELOAD (admin command or SIGHUP),
// ROLLBACK to a cached version, and the backend pools that follow the
// config's `backends:` list.
//
// Everything that changes the map runs under one mutex: validate completely,
// then add pools for new backends on every worker, publish the compiled map
// with one atomic store (statements plan against one snapshot; transactions
// keep theirs), then retire pools of removed backends (they stop lending and
// close each connection as its borrower returns it), then record the map in
// the cache. A refused map changes nothing.
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "conf/backend_config.hpp"
#include "coord/etcd_messages.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/maps/shard_map_store.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::proxy {

class PoolHost;

// ---- pure decisions (unit-tested) ----

enum class SwapVerdict : uint8_t { kApply, kUnchanged, kRefused };

struct SwapDecision {
  SwapVerdict verdict = SwapVerdict::kApply;
  std::string message;
};

// Whether `candidate` may replace `running` (null: no map yet). An identical
// map (same checksum) is a no-op; a reload needs a greater version; a
// rollback (an explicit operator choice of a cached map) may go lower.
SwapDecision decideSwap(const routing::CompiledShardMap* running, const routing::CompiledShardMap& candidate,
                        bool is_rollback);

struct BackendDiff {
  std::vector<conf::BackendConfig> added;    // new names, or a name whose address/account changed
  std::vector<std::string> removed;          // names gone, or replaced (changed)
  std::vector<std::string> problems;         // e.g. the default backend removed
};

// Compares the running backend list with the one just read from the config.
BackendDiff diffBackends(const std::vector<conf::BackendConfig>& running, const std::vector<conf::BackendConfig>& next,
                         const std::string& default_backend);

// ---- the manager ----

struct SwapOutcome {
  SwapVerdict verdict = SwapVerdict::kRefused;
  uint64_t old_version = 0;
  uint64_t new_version = 0;
  std::string checksum;                      // of the map in force afterwards
  std::string message;                       // one line for the operator
  std::vector<std::string> problems;         // kRefused: every problem found
  std::vector<std::string> backends_added;
  std::vector<std::string> backends_removed;
  double swap_ms = 0;                        // validation + pool changes + the atomic swap
  double duration_ms = 0;                    // the same plus the cache write (an fsync)
};

// One backend, summed over worker threads (SHOW BACKENDS).
struct BackendRow {
  std::string name;
  std::string address;
  std::string state;        // up, down, draining
  uint32_t max = 0;
  uint32_t total = 0;
  uint32_t in_use = 0;
  uint32_t idle = 0;
  uint64_t connects = 0;
  uint64_t connect_errors = 0;
  uint64_t broken = 0;
  uint64_t waits = 0;
  std::string last_error;
  // Replication groups (docs/availability.md): the pool's server as the
  // replica monitor last saw it; `health` empty when nothing watches it.
  std::string group;        // the backend this server belongs to (its own name for a primary)
  std::string role;         // primary, replica
  std::string health;       // serverStateName(), or empty
  std::optional<bool> read_only;
  std::optional<int64_t> lag_seconds;
  std::string gtid_position;
  std::string replicates_from;
  uint64_t replica_reads = 0;
  std::string failover_loss;  // primaries: whether a failover can lose acknowledged writes
};

// The fleet (proxy/fleet/fleet_agent.hpp) as the manager sees it: where a map is
// published before it is applied, and who hears that a map was applied.
class FleetLink {
 public:
  virtual ~FleetLink() = default;
  // Compare-and-swap of <prefix>/map: succeeds only when the fleet's map is
  // still the one at `expected_revision` (0: none yet) and, with a guard,
  // while the guard's key stands (a move's fence). The new revision, or
  // why nothing was published (etcd unreachable, another proxy was first).
  virtual std::expected<int64_t, std::string> publish(const routing::CompiledShardMap& map, int64_t expected_revision,
                                                      const std::string& who, const std::string& note,
                                                      const coord::EtcdGuard* guard) = 0;
  // The map in force changed (or was confirmed) at this fleet revision.
  virtual void applied(const routing::CompiledShardMap& map, int64_t revision) = 0;
};

// What the fleet says the map is (a <prefix>/map record and its revision).
struct FleetMap {
  std::string source;
  std::string published_by;
  std::string note;
  int64_t revision = 0;
};

class ShardMapManager {
 public:
  explicit ShardMapManager(ProxyContext& context);

  // Opens the cache and publishes the first map: the map file, or when it is
  // missing or invalid the newest cached map (logged as a warning). Returns
  // an error message when neither gives a usable map.
  std::string startup();
  // The workers whose pools follow backend changes (after they exist).
  void attachWorkers(std::vector<PoolHost*> workers);
  // Told of each change of the backends a reload applies (after the pools;
  // the replica monitor probes the new servers).
  using BackendsChanged = std::function<void(const BackendDiff& diff)>;
  void onBackendsChanged(BackendsChanged hook) { backends_changed_ = std::move(hook); }

  // `who`: "admin:<user>" or "sighup".
  SwapOutcome reload(const std::string& who);
  SwapOutcome rollback(uint64_t version, const std::string& who);
  // A map made by the proxy (an online move's switch, move_steps.cpp): the
  // same validation, version rule and history as a reload; once in force it
  // is also written to the map file (the previous file kept as
  // <file>.before-v<version>), so a restart or a later RELOAD starts from it.
  // In a fleet, `guard` (the move's fence) must still stand for the publish to happen.
  SwapOutcome publishGenerated(const std::string& yaml_text, const std::string& who, const std::string& note,
                               const coord::EtcdGuard* guard = nullptr);
  // Same, for a map derived from the one in force: `derive` reads it and
  // returns the next map's text (or why not, which refuses), under the same
  // lock as the publish, so two writers (two moves' cut-overs, a RELOAD)
  // never derive from one version and the second never fails for it.
  using DeriveMap = std::function<std::expected<std::string, std::string>(const routing::CompiledShardMap& in_force)>;
  SwapOutcome publishDerived(const DeriveMap& derive, const std::string& who, const std::string& note,
                             const coord::EtcdGuard* guard = nullptr);

  // Fleet mode: RELOAD and ROLLBACK publish through `fleet` before applying.
  void attachFleet(FleetLink* fleet);
  // A map the fleet published (any proxy, this one included): validated like
  // a reload, applied whatever its version (the fleet decided), recorded in
  // the cache. Refused maps leave the running one in force.
  SwapOutcome applyFromFleet(const FleetMap& published);
  // The revision of <prefix>/map this proxy applied last (0: none yet).
  int64_t fleetRevision();
  // <prefix>/map was deleted: the next publication creates it again.
  void forgetFleetRevision();

  std::expected<std::vector<CachedShardMap>, std::string> history();
  std::vector<std::string> lastProblems();
  std::vector<BackendRow> backends();
  bool hasCache();

 private:
  SwapOutcome apply(std::shared_ptr<const routing::CompiledShardMap> candidate, const BackendDiff& diff,
                    std::vector<conf::BackendConfig> next_backends, const std::string& who, const std::string& note,
                    bool is_rollback, std::chrono::steady_clock::time_point started, int64_t fleet_revision = -1,
                    const coord::EtcdGuard* guard = nullptr);
  // publishGenerated's body; mutex_ held.
  SwapOutcome publishLocked(const std::string& yaml_text, const std::string& who, const std::string& note,
                            const coord::EtcdGuard* guard, std::chrono::steady_clock::time_point started);
  SwapOutcome refuse(std::vector<std::string> problems, const std::string& who, const std::string& what,
                     std::chrono::steady_clock::time_point started);
  void openCache();
  std::string writeMapFile(const routing::CompiledShardMap& map);
  void record(const routing::CompiledShardMap& map, const std::string& who, const std::string& note);
  void changePools(const BackendDiff& diff, bool before_publish);
  std::vector<std::string> backendNames(const std::vector<conf::BackendConfig>& backends) const;

  std::mutex mutex_;
  ProxyContext& context_;
  std::unique_ptr<ShardMapStore> store_;       // null: no cache configured, or it cannot be opened
  std::vector<conf::BackendConfig> backends_;  // the backends with pools now
  std::vector<PoolHost*> workers_;
  BackendsChanged backends_changed_;
  std::vector<std::string> last_problems_;
  FleetLink* fleet_ = nullptr;
  int64_t fleet_revision_ = 0;
};

}  // namespace sp::proxy
