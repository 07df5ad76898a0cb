#include "proxy/maps/shard_map_manager.hpp"
#include "conf/config.hpp"
#include "proxy/backend/pool_host.hpp"
#include "proxy/core/replica_health.hpp"

#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>


namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string shortSum(const std::string& checksum) { return checksum.substr(0, 12); }

bool sameBackend(const conf::BackendConfig& a, const conf::BackendConfig& b) {
  return a.address.host == b.address.host && a.address.port == b.address.port && a.user == b.user &&
         a.password == b.password && a.database == b.database && a.max_connections == b.max_connections &&
         a.max_connecting == b.max_connecting && a.min_connections == b.min_connections && a.connect_timeout_ms == b.connect_timeout_ms &&
         a.idle_timeout_ms == b.idle_timeout_ms && a.ping_interval_ms == b.ping_interval_ms &&
         a.query_timeout_ms == b.query_timeout_ms && a.tls == b.tls;
}

const conf::BackendConfig* findByName(const std::vector<conf::BackendConfig>& list, const std::string& name) {
  for (const auto& b : list) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    if (nl > start) lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

int64_t unixMillisNow() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Backends new in this reload must at least resolve.
std::vector<std::string> checkResolvable(const std::vector<conf::BackendConfig>& added) {
  std::vector<std::string> problems;
  if (added.empty()) return problems;
  asio::io_context io;
  tcp::resolver resolver(io);
  for (const auto& b : added) {
    error_code ec;
    auto results = resolver.resolve(b.address.host, std::to_string(b.address.port), ec);
    if (ec || results.empty()) {
      problems.push_back(fmt::format("config: backends.{}.address: '{}' does not resolve: {}", b.name,
                                     conf::formatHostPort(b.address), ec ? ec.message() : "no address"));
    }
  }
  return problems;
}

}  // namespace

SwapDecision decideSwap(const routing::CompiledShardMap* running, const routing::CompiledShardMap& candidate,
                        bool is_rollback) {
  if (!running) return {SwapVerdict::kApply, fmt::format("version {} applied (no map was in force)", candidate.version())};
  if (running->checksum() == candidate.checksum()) {
    return {SwapVerdict::kUnchanged,
            fmt::format("shard map unchanged: version {} (checksum {}) is already in force", running->version(),
                        shortSum(running->checksum()))};
  }
  if (!is_rollback && candidate.version() <= running->version()) {
    return {SwapVerdict::kRefused,
            fmt::format("version: {} must be greater than the running version {} (the content differs; bump "
                        "'version', or use ROLLBACK SHARD MAP TO to go back to a cached map)",
                        candidate.version(), running->version())};
  }
  return {SwapVerdict::kApply, fmt::format("version {} -> {}", running->version(), candidate.version())};
}

BackendDiff diffBackends(const std::vector<conf::BackendConfig>& running, const std::vector<conf::BackendConfig>& next,
                         const std::string& default_backend) {
  BackendDiff diff;
  for (const auto& b : next) {
    const auto* old = findByName(running, b.name);
    if (!old) {
      diff.added.push_back(b);
    } else if (!sameBackend(*old, b)) {
      diff.removed.push_back(b.name);
      diff.added.push_back(b);
    }
  }
  for (const auto& b : running) {
    if (!findByName(next, b.name)) diff.removed.push_back(b.name);
  }
  bool default_touched = std::find(diff.removed.begin(), diff.removed.end(), default_backend) != diff.removed.end();
  if (default_touched) {
    diff.problems.push_back(fmt::format(
        "config: backends: the default backend '{}' cannot be removed or changed by a reload (restart the proxy)",
        default_backend));
  }
  return diff;
}

ShardMapManager::ShardMapManager(ProxyContext& context) : context_(context), backends_(context.config().backends) {}

std::vector<std::string> ShardMapManager::backendNames(const std::vector<conf::BackendConfig>& backends) const {
  std::vector<std::string> names;
  for (const auto& b : backends) names.push_back(b.name);
  return names;
}

void ShardMapManager::openCache() {
  const auto& path = context_.config().cache_path;
  if (path.empty()) {
    spdlog::info("no shard-map cache configured (config key 'cache'): no fallback map and no rollback");
    return;
  }
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path, &report);
  if (!store) {
    spdlog::error("shard-map cache unusable, running without it: {}", store.error());
    return;
  }
  if (!report.set_aside_path.empty()) {
    spdlog::error("shard-map cache {} was corrupt ({}); moved it to {} and started an empty cache", path,
                  report.problem, report.set_aside_path);
  } else if (report.created) {
    spdlog::info("shard-map cache {} created", path);
  }
  store_ = std::move(*store);
}

void ShardMapManager::record(const routing::CompiledShardMap& map, const std::string& who, const std::string& note) {
  if (!store_) return;
  CachedShardMap row;
  row.version = map.version();
  row.checksum = map.checksum();
  row.source_text = map.sourceText();
  row.applied_by = who;
  row.note = note;
  if (auto saved = store_->save(std::move(row)); !saved) {
    spdlog::error("shard map version {} is in force but could not be cached: {}", map.version(), saved.error());
  }
}

std::string ShardMapManager::startup() {
  std::lock_guard lock(mutex_);
  openCache();
  const auto& path = context_.config().shard_map_path;
  auto names = backendNames(backends_);
  if (context_.config().fleet && store_) {
    // A fleet member serves the map it applied last (the fleet's), not its
    // file, until etcd says otherwise: a restart during an etcd outage must
    // not bring an older map back.
    if (auto newest = store_->newest(); newest && *newest) {
      if (auto cached = routing::compileShardMap((*newest)->source_text, names)) {
        context_.shard_map.store(*cached);
        context_.last_reload_unix_ms.store(unixMillisNow());
        spdlog::info("fleet member: starting from the newest cached map, version {} (checksum {}, applied {} by {}); "
                     "the fleet's map replaces it once etcd answers",
                     (*cached)->version(), shortSum((*cached)->checksum()), (*newest)->applied_at, (*newest)->applied_by);
        return {};
      }
    }
  }
  if (path.empty()) return {};
  auto map = routing::loadShardMap(path, names);
  if (map) {
    context_.shard_map.store(*map);
    context_.last_reload_unix_ms.store(unixMillisNow());
    spdlog::info("shard map {} version {} loaded ({} sharded tables, checksum {})", path, (*map)->version(),
                 (*map)->tables().size(), shortSum((*map)->checksum()));
    std::optional<CachedShardMap> newest;
    if (store_) {
      if (auto n = store_->newest()) newest = *n;
    }
    if (!newest || newest->checksum != (*map)->checksum()) record(**map, "startup", "map file");
    return {};
  }
  std::string file_problems = routing::formatShardMapIssues(map.error(), path);
  if (!store_) return "invalid shard map and no usable cache:\n" + file_problems;
  auto newest = store_->newest();
  if (!newest || !*newest) {
    return "invalid shard map and the cache " + store_->path() + " holds no map:\n" + file_problems;
  }
  auto cached = routing::compileShardMap((*newest)->source_text, names);
  if (!cached) {
    return "invalid shard map, and the newest cached map (version " + std::to_string((*newest)->version) +
           ") no longer validates:\n" + file_problems +
           routing::formatShardMapIssues(cached.error(), "cache:version " + std::to_string((*newest)->version));
  }
  context_.shard_map.store(*cached);
  context_.last_reload_unix_ms.store(unixMillisNow());
  spdlog::warn("SHARD MAP FILE {} IS MISSING OR INVALID; running the newest CACHED map: version {} (checksum {}, "
               "applied {} by {}). Fix the file, then RELOAD SHARD MAP. Problems:\n{}",
               path, (*cached)->version(), shortSum((*cached)->checksum()), (*newest)->applied_at,
               (*newest)->applied_by, file_problems);
  return {};
}

void ShardMapManager::attachWorkers(std::vector<PoolHost*> workers) {
  std::lock_guard lock(mutex_);
  workers_ = std::move(workers);
}

SwapOutcome ShardMapManager::refuse(std::vector<std::string> problems, const std::string& who,
                                    const std::string& what, Clock::time_point started) {
  SwapOutcome out;
  out.verdict = SwapVerdict::kRefused;
  auto running = context_.shard_map.load();
  out.old_version = out.new_version = running ? running->version() : 0;
  out.checksum = running ? running->checksum() : "";
  out.message = fmt::format("{} refused: {} problem{}; the running map (version {}) is unchanged", what,
                            problems.size(), problems.size() == 1 ? "" : "s", out.old_version);
  out.problems = std::move(problems);
  out.duration_ms = millisSince(started);
  last_problems_ = out.problems;
  context_.reloads_refused.fetch_add(1);
  spdlog::warn("{} (by {}):\n  {}", out.message, who, fmt::join(out.problems, "\n  "));
  return out;
}

SwapOutcome ShardMapManager::reload(const std::string& who) {
  std::lock_guard lock(mutex_);
  auto started = Clock::now();
  std::vector<std::string> problems;
  std::vector<conf::BackendConfig> next_backends = backends_;
  const auto& source = context_.config().source_path;
  std::optional<conf::Config> reread;  // its budgets follow the reload (backend_admission.hpp)
  if (!source.empty()) {
    auto config = conf::loadConfig(source);
    if (!config) {
      for (auto& line : splitLines(conf::formatIssues(config.error(), source))) problems.push_back(std::move(line));
      return refuse(std::move(problems), who, "RELOAD SHARD MAP", started);
    }
    next_backends = config->backends;
    reread = *config;
    if (config->default_backend != context_.config().default_backend) {
      spdlog::warn("config default_backend changed to '{}': ignored until restart (running '{}')",
                   config->default_backend, context_.config().default_backend);
    }
  }
  BackendDiff diff = diffBackends(backends_, next_backends, context_.config().default_backend);
  problems = diff.problems;
  for (auto& p : checkResolvable(diff.added)) problems.push_back(std::move(p));
  const auto& path = context_.config().shard_map_path;
  std::shared_ptr<const routing::CompiledShardMap> candidate;
  if (!path.empty()) {
    auto map = routing::loadShardMap(path, backendNames(next_backends));
    if (!map) {
      for (auto& line : splitLines(routing::formatShardMapIssues(map.error(), path))) problems.push_back(line);
    } else {
      candidate = *map;
    }
  }
  if (!problems.empty()) return refuse(std::move(problems), who, "RELOAD SHARD MAP", started);
  SwapOutcome out = apply(candidate, diff, std::move(next_backends), who, "reload", false, started);
  if (reread && out.verdict != SwapVerdict::kRefused) {
    // The servers' concurrency budgets, the queue's bounds and the hot-key
    // limits follow the file, whether or not the map changed (no pool is replaced for them).
    context_.admissions.configure(serverBudgets(*reread), overloadSettings(*reread));
    context_.hot_keys.configure(hotKeySettings(*reread));
    context_.hot_key_pacer.configure(reread->overload.hot_key_max_per_second,
                                     std::chrono::milliseconds(reread->overload.queue_timeout_ms));
    context_.hot_key_stats.configure(reread->overload.hot_keys_tracked);
    context_.hot_key_auto_move.store(
        std::make_shared<const conf::HotKeyAutoMoveConfig>(reread->overload.hot_key_auto_move));
  }
  return out;
}

SwapOutcome ShardMapManager::rollback(uint64_t version, const std::string& who) {
  std::lock_guard lock(mutex_);
  auto started = Clock::now();
  std::string what = fmt::format("ROLLBACK SHARD MAP TO {}", version);
  if (!store_) return refuse({"no shard-map cache is configured or usable (config key 'cache')"}, who, what, started);
  auto row = store_->findVersion(version);
  if (!row) return refuse({row.error()}, who, what, started);
  if (!*row) {
    return refuse({fmt::format("version {} is not in the cache (see SHOW SHARD MAP HISTORY)", version)}, who, what,
                  started);
  }
  auto map = routing::compileShardMap((*row)->source_text, backendNames(backends_));
  if (!map) {
    auto lines = splitLines(routing::formatShardMapIssues(map.error(), "cache:version " + std::to_string(version)));
    return refuse(std::move(lines), who, what, started);
  }
  return apply(*map, BackendDiff{}, backends_, who, fmt::format("rollback to {}", version), true, started);
}

SwapOutcome ShardMapManager::publishDerived(const DeriveMap& derive, const std::string& who, const std::string& note,
                                            const coord::EtcdGuard* guard) {
  std::lock_guard lock(mutex_);
  auto started = Clock::now();
  auto running = context_.shard_map.load();
  if (!running) return refuse({"no shard map in force"}, who, note, started);
  auto yaml_text = derive(*running);
  if (!yaml_text) return refuse({yaml_text.error()}, who, note, started);
  return publishLocked(*yaml_text, who, note, guard, started);
}

SwapOutcome ShardMapManager::publishGenerated(const std::string& yaml_text, const std::string& who,
                                              const std::string& note, const coord::EtcdGuard* guard) {
  std::lock_guard lock(mutex_);
  return publishLocked(yaml_text, who, note, guard, Clock::now());
}

SwapOutcome ShardMapManager::publishLocked(const std::string& yaml_text, const std::string& who,
                                           const std::string& note, const coord::EtcdGuard* guard,
                                           Clock::time_point started) {
  auto map = routing::compileShardMap(yaml_text, backendNames(backends_));
  if (!map) {
    auto lines = splitLines(routing::formatShardMapIssues(map.error(), "generated map"));
    return refuse(std::move(lines), who, note, started);
  }
  SwapOutcome out = apply(*map, BackendDiff{}, backends_, who, note, false, started, -1, guard);
  if (out.verdict == SwapVerdict::kApply) {
    if (auto problem = writeMapFile(**map); !problem.empty()) {
      out.message += "; " + problem;
      spdlog::error("shard map version {} is in force but the map file was not updated: {}", (*map)->version(),
                    problem);
    }
  }
  return out;
}

std::string ShardMapManager::writeMapFile(const routing::CompiledShardMap& map) {
  namespace fs = std::filesystem;
  const auto& path = context_.config().shard_map_path;
  if (path.empty()) return {};
  std::error_code ec;
  if (fs::exists(path, ec)) {
    fs::copy_file(path, fmt::format("{}.before-v{}", path, map.version()), fs::copy_options::overwrite_existing, ec);
    if (ec) return "cannot keep the previous map file: " + ec.message();
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << map.sourceText();
    if (!out.flush()) return "cannot write " + tmp;
  }
  fs::rename(tmp, path, ec);
  if (ec) return "cannot replace " + path + ": " + ec.message();
  return {};
}

SwapOutcome ShardMapManager::apply(std::shared_ptr<const routing::CompiledShardMap> candidate, const BackendDiff& diff,
                                   std::vector<conf::BackendConfig> next_backends, const std::string& who,
                                   const std::string& note, bool is_rollback, Clock::time_point started,
                                   int64_t fleet_revision, const coord::EtcdGuard* guard) {
  auto running = context_.shard_map.load();
  SwapOutcome out;
  out.old_version = running ? running->version() : 0;
  SwapDecision decision{SwapVerdict::kUnchanged, "no shard map configured"};
  if (candidate) decision = decideSwap(running.get(), *candidate, is_rollback);
  const char* what = is_rollback ? "ROLLBACK SHARD MAP" : "RELOAD SHARD MAP";
  if (decision.verdict == SwapVerdict::kRefused) return refuse({decision.message}, who, what, started);
  if (decision.verdict == SwapVerdict::kApply && fleet_ && fleet_revision < 0) {
    // Published first: the fleet's compare-and-swap decides; every proxy,
    // this one too, applies what the fleet holds.
    auto published = fleet_->publish(*candidate, fleet_revision_, who, note, guard);
    if (!published) return refuse({"fleet: " + published.error()}, who, what, started);
    fleet_revision = *published;
  }
  if (fleet_revision >= 0) fleet_revision_ = fleet_revision;
  // Pools first, so the new map never names a backend a worker has no pool for.
  changePools(diff, true);
  backends_ = std::move(next_backends);
  for (const auto& b : diff.added) out.backends_added.push_back(b.name);
  out.backends_removed = diff.removed;
  out.verdict = decision.verdict;
  out.message = decision.message;
  if (decision.verdict == SwapVerdict::kApply) {
    context_.shard_map.store(candidate);
    out.swap_ms = millisSince(started);
    context_.reloads_applied.fetch_add(1);
    context_.last_reload_unix_ms.store(unixMillisNow());
    spdlog::info("shard map swapped by {}: version {} -> {} (checksum {}, {} tables) in {:.2f} ms ({})", who,
                 out.old_version, candidate->version(), shortSum(candidate->checksum()), candidate->tables().size(),
                 out.swap_ms, note);
    record(*candidate, who, note);
  } else {
    spdlog::info("{} by {}: {}", is_rollback ? "ROLLBACK SHARD MAP" : "RELOAD SHARD MAP", who, out.message);
  }
  changePools(diff, false);
  if ((!diff.added.empty() || !diff.removed.empty()) && backends_changed_) backends_changed_(diff);
  if (!diff.added.empty() || !diff.removed.empty()) {
    spdlog::info("backends changed by {}: added [{}], draining [{}]", who, fmt::join(out.backends_added, ", "),
                 fmt::join(out.backends_removed, ", "));
  }
  auto now = context_.shard_map.load();
  if (fleet_ && now && fleet_revision >= 0) fleet_->applied(*now, fleet_revision_);
  out.new_version = now ? now->version() : 0;
  out.checksum = now ? now->checksum() : "";
  last_problems_.clear();
  out.duration_ms = millisSince(started);
  if (decision.verdict != SwapVerdict::kApply) out.swap_ms = out.duration_ms;
  return out;
}

void ShardMapManager::changePools(const BackendDiff& diff, bool before_publish) {
  if (diff.added.empty() && diff.removed.empty()) return;
  // Before the swap: start pools for new backends (a changed backend's old
  // pool is retired in the same step so the new one can take its name).
  // After the swap: retire pools of backends that are gone, which the map in
  // force no longer names.
  std::vector<std::string> retire;
  std::vector<conf::BackendConfig> add;
  for (const auto& name : diff.removed) {
    bool replaced = std::any_of(diff.added.begin(), diff.added.end(), [&](const auto& b) { return b.name == name; });
    if (replaced == before_publish) retire.push_back(name);
  }
  if (before_publish) add = diff.added;
  for (auto* w : workers_) {
    if (!w->changePools(retire, add)) spdlog::error("worker {} did not apply the backend changes within 5 s", w->index());
  }
}

void ShardMapManager::attachFleet(FleetLink* fleet) {
  std::lock_guard lock(mutex_);
  fleet_ = fleet;
}

int64_t ShardMapManager::fleetRevision() {
  std::lock_guard lock(mutex_);
  return fleet_revision_;
}

void ShardMapManager::forgetFleetRevision() {
  std::lock_guard lock(mutex_);
  fleet_revision_ = 0;
}

SwapOutcome ShardMapManager::applyFromFleet(const FleetMap& published) {
  std::lock_guard lock(mutex_);
  auto started = Clock::now();
  std::string who = "fleet:" + published.published_by;
  auto map = routing::compileShardMap(published.source, backendNames(backends_));
  if (!map) {
    auto where = "fleet:revision " + std::to_string(published.revision);
    return refuse(splitLines(routing::formatShardMapIssues(map.error(), where)), who, "fleet map", started);
  }
  // Any version: the fleet's compare-and-swap already ordered it (a rollback
  // publishes a lower one).
  return apply(*map, BackendDiff{}, backends_, who, published.note, true, started, published.revision);
}

std::expected<std::vector<CachedShardMap>, std::string> ShardMapManager::history() {
  std::lock_guard lock(mutex_);
  if (!store_) return std::unexpected("no shard-map cache is configured or usable (config key 'cache')");
  return store_->list();
}

std::vector<std::string> ShardMapManager::lastProblems() {
  std::lock_guard lock(mutex_);
  return last_problems_;
}

bool ShardMapManager::hasCache() {
  std::lock_guard lock(mutex_);
  return store_ != nullptr;
}

std::vector<BackendRow> ShardMapManager::backends() {
  std::vector<PoolHost*> workers;
  {
    std::lock_guard lock(mutex_);
    workers = workers_;
  }
  std::vector<BackendRow> rows;
  // One row per pool name, role and draining: after a switchover the old
  // primary's replica pool has the backend's name, like the backend's pool.
  auto rowFor = [&rows](const std::string& name, bool replica, bool draining) -> BackendRow& {
    const std::string_view role = replica ? "replica" : "primary";
    for (auto& r : rows) {
      if (r.name == name && r.role == role && (r.state == "draining") == draining) return r;
    }
    BackendRow row;
    row.name = name;
    row.role = std::string(role);
    if (draining) row.state = "draining";
    rows.push_back(std::move(row));
    return rows.back();
  };
  for (auto* w : workers) {
    auto snaps = w->snapshotPools();
    if (!snaps) continue;
    for (auto& s : *snaps) {
      if (s.draining && s.stats.total == 0) continue;  // fully drained: nothing left to show
      BackendRow& r = rowFor(s.name, s.replica, s.draining);
      r.address = s.address;
      r.max += s.stats.max;
      r.total += s.stats.total;
      r.in_use += s.stats.in_use;
      r.idle += s.stats.idle;
      r.connects += s.stats.connects;
      r.connect_errors += s.stats.connect_errors;
      r.broken += s.stats.broken;
      r.waits += s.stats.waits;
      if (!s.draining) {
        // Up unless every worker's pool is marked down.
        if (r.state.empty() || r.state == "down") r.state = s.stats.down ? "down" : "up";
        else if (!s.stats.down) r.state = "up";
      }
      if (!s.stats.last_error.empty()) r.last_error = s.stats.last_error;
      r.group = s.backend.empty() ? s.name : s.backend;
      r.role = s.replica ? "replica" : "primary";
      r.replica_reads += s.stats.replica_reads;
    }
  }
  if (auto topology = context_.topology.load()) {
    // A primary's pool is named by its backend; the row names the server
    // that serves it now (a SWITCHOVER / FAILOVER may have changed it).
    for (auto& r : rows) {
      if (r.role != "primary" || r.state == "draining") continue;
      if (const GroupTopology* g = topology->find(r.group)) r.name = g->primary;
    }
    // Servers with no pool: fenced ones (a failover demoted them) serve nothing.
    for (const auto& g : topology->groups) {
      for (const auto& name : g.fenced) {
        BackendRow row;
        row.name = name;
        row.group = g.backend;
        row.role = "fenced";
        row.state = "fenced";
        rows.push_back(std::move(row));
      }
    }
  }
  if (auto health = context_.replica_health.load()) {
    for (auto& r : rows) {
      const ServerHealth* h = health->find(r.name);
      if (!h) continue;
      r.health = std::string(serverStateName(h->state));
      if (r.address.empty()) r.address = h->address;
      if (h->answered) r.read_only = h->read_only;
      r.lag_seconds = h->lag_seconds;
      r.gtid_position = h->gtid_current_pos;
      r.replicates_from = h->source;
      if (!h->last_error.empty() && r.last_error.empty()) r.last_error = h->last_error;
      if (h->primary) r.failover_loss = failoverLoss(*h);
    }
  }
  return rows;
}

}  // namespace sp::proxy
