#include "proxy/admin/admin_results.hpp"

#include "proxy/admin/hot_keys_command.hpp"
#include "proxy/admin/transactions_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "conf/config.hpp"
#include "proxy/fleet/fleet_agent.hpp"
#include "proxy/admin/metrics_server.hpp"
#include "proxy/maps/shard_map_manager.hpp"
#include "proxy/session/worker.hpp"
#include "routing/explain.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

namespace {

using Row = std::vector<std::optional<std::string>>;

std::string rangesText(const std::vector<routing::BucketRange>& ranges) {
  std::string out;
  for (const auto& r : ranges) {
    if (!out.empty()) out += ',';
    out += r.first == r.last ? std::to_string(r.first) : fmt::format("{}-{}", r.first, r.last);
  }
  return out.empty() ? "-" : out;
}

std::string hotKeysOf(const routing::TableRule& t, uint32_t shard_index) {
  std::string out;
  for (const auto& [key, index] : t.hot_keys) {
    if (index != shard_index) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(key);
  }
  return out.empty() ? "-" : out;
}

LocalResult showShardMap(const ProxyContext& ctx) {
  LocalResult r;
  r.columns = {"version", "checksum", "table", "method", "key", "shard", "physical_table", "backend", "buckets",
               "hot_keys"};
  auto map = ctx.shard_map.load();
  if (!map) return r;
  for (const auto& t : map->tables()) {
    for (const auto& s : t.shards) {
      bool bucket = t.method == routing::ShardMethod::kBucket;
      r.rows.push_back(Row{std::to_string(map->version()), map->checksum(), t.name,
                           std::string(routing::toString(t.method)), t.key, s.name, s.physical_table, s.backend,
                           bucket ? rangesText(s.buckets) : std::string("-"),
                           bucket ? hotKeysOf(t, s.index) : std::string("-")});
    }
  }
  return r;
}

AdminReply showHistory(AdminEnv& env) {
  auto rows = env.maps.history();
  if (!rows) return AdminError{1105, "HY000", "shardproxy admin: " + rows.error()};
  auto running = env.context.shard_map.load();
  LocalResult r;
  r.columns = {"id", "version", "checksum", "applied_at", "applied_by", "note", "in_force"};
  bool marked = false;
  for (const auto& m : *rows) {
    bool in_force = !marked && running && running->checksum() == m.checksum;
    marked = marked || in_force;
    r.rows.push_back(Row{std::to_string(m.id), std::to_string(m.version), m.checksum, m.applied_at, m.applied_by,
                         m.note, std::string(in_force ? "yes" : "")});
  }
  return r;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "-" : out;
}

AdminReply swapReply(const SwapOutcome& o) {
  if (o.verdict == SwapVerdict::kRefused) return AdminError{1105, "HY000", refusalMessage(o.message, o.problems)};
  LocalResult r;
  r.columns = {"result", "old_version", "new_version", "checksum", "swap_ms", "duration_ms", "backends_added",
               "backends_removed", "message"};
  r.rows.push_back(Row{std::string(o.verdict == SwapVerdict::kApply ? "applied" : "unchanged"),
                       std::to_string(o.old_version), std::to_string(o.new_version), o.checksum,
                       fmt::format("{:.3f}", o.swap_ms), fmt::format("{:.3f}", o.duration_ms),
                       joinNames(o.backends_added),
                       joinNames(o.backends_removed), o.message});
  return r;
}

LocalResult showBackends(AdminEnv& env) {
  LocalResult r;
  r.columns = {"backend", "address", "state", "pool_max", "connections", "in_use", "idle", "connects",
               "connect_errors", "broken", "waits", "last_error",
               // Replication groups (docs/availability.md): NULL where nothing watches the server.
               "group", "role", "health", "read_only", "lag_seconds", "gtid_position", "replicates_from",
               "replica_reads", "failover_loss"};
  auto orNull = [](const std::string& s) { return s.empty() ? std::optional<std::string>() : s; };
  for (const auto& b : env.maps.backends()) {
    r.rows.push_back(Row{b.name, b.address, b.state, std::to_string(b.max), std::to_string(b.total),
                         std::to_string(b.in_use), std::to_string(b.idle), std::to_string(b.connects),
                         std::to_string(b.connect_errors), std::to_string(b.broken), std::to_string(b.waits),
                         orNull(b.last_error), b.group, b.role, orNull(b.health),
                         b.read_only ? std::optional<std::string>(*b.read_only ? "1" : "0") : std::nullopt,
                         b.lag_seconds ? std::optional<std::string>(std::to_string(*b.lag_seconds)) : std::nullopt,
                         orNull(b.gtid_position), orNull(b.replicates_from), std::to_string(b.replica_reads),
                         orNull(b.failover_loss)});
  }
  return r;
}

LocalResult showSessions(AdminEnv& env) {
  LocalResult r;
  const auto& c = env.context;
  r.columns = {"sessions",           "in_transaction",      "statements",         "admin_sessions",
               "refused_max_connections", "refused_per_host", "handshake_timeouts", "handshake_too_large",
               "idle_timeouts", "tls_sessions", "tls_handshake_failures", "refused_pinned", "refused_merge_memory",
               "merge_memory_in_use", "write_timeouts"};
  r.rows.push_back(Row{std::to_string(c.sessions.load()), std::to_string(c.sessions_in_transaction.load()),
                       std::to_string(c.statements.load()), std::to_string(env.admin_sessions),
                       std::to_string(c.refused_max_connections.load()), std::to_string(c.refused_per_host.load()),
                       std::to_string(c.handshake_timeouts.load()), std::to_string(c.handshake_too_large.load()),
                       std::to_string(c.idle_timeouts.load()), std::to_string(c.tls_sessions.load()),
                       std::to_string(c.tls_handshake_failures.load()), std::to_string(c.refused_pinned.load()),
                       std::to_string(c.refused_merge_memory.load()), std::to_string(c.merge_budget.used()),
                       std::to_string(c.write_timeouts.load())});
  return r;
}

// One row per server with a concurrency budget, or that had one (backend_admission.hpp).
LocalResult showOverload(AdminEnv& env) {
  LocalResult r;
  const auto settings = env.context.admissions.settings();
  r.columns = {"server",           "max_active_statements", "active",      "queued",
               "admitted",         "waited",                "bypassed",    "rejected_timeout",
               "rejected_queue_full", "interrupted",        "wait_ms_avg", "wait_ms_max",
               "queue_timeout_ms", "max_queued_per_backend"};
  auto ms = [](double seconds) { return fmt::format("{:.1f}", seconds * 1000); };
  for (const auto& s : env.context.admissions.stats()) {
    r.rows.push_back(Row{s.server, std::to_string(s.budget), std::to_string(s.active), std::to_string(s.queued),
                         std::to_string(s.admitted), std::to_string(s.waited), std::to_string(s.bypassed),
                         std::to_string(s.rejected_timeout), std::to_string(s.rejected_full),
                         std::to_string(s.interrupted), ms(s.wait_count ? s.wait_seconds_sum / s.wait_count : 0),
                         ms(s.wait_seconds_max), std::to_string(settings.queue_timeout.count()),
                         std::to_string(settings.max_queued)});
  }
  return r;
}

LocalResult showRoute(AdminEnv& env, const std::string& statement) {
  LocalResult r;
  for (auto column : routing::kExplainColumns) r.columns.emplace_back(column);
  auto map = env.context.shard_map.load();
  const auto& default_backend = env.context.config().default_backend;
  if (!map) {
    r.rows.push_back(Row{"-", default_backend, "-", statement});
    return r;
  }
  routing::PlannerInput input{*map, default_backend};
  for (auto& row : routing::explainRows(routing::planQuery(statement, input))) {
    r.rows.push_back(Row{std::move(row.shard), std::move(row.backend), std::move(row.table), std::move(row.sql)});
  }
  return r;
}

std::string isoMillis(int64_t ms) {
  if (ms == 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

// A scatter digest's shards, slowest average first: "shard@backend avg/max ms (n, slowest k times)".
std::string digestShardTimes(const DigestStats& d) {
  if (d.shard_stats.empty()) return "-";
  std::vector<const DigestShardStats*> order;
  for (const auto& s : d.shard_stats) order.push_back(&s);
  auto avg = [](const DigestShardStats* s) { return static_cast<double>(s->total_us) / static_cast<double>(std::max<uint64_t>(s->count, 1)); };
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return avg(a) > avg(b); });
  std::string out;
  for (const auto* s : order) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{}@{} avg {:.3f} max {:.3f} ms (n {}, slowest {})", s->shard, s->backend, avg(s) / 1000.0,
                       static_cast<double>(s->max_us) / 1000.0, s->count, s->slowest);
  }
  return out;
}

AdminReply showDigests(AdminEnv& env, uint64_t limit) {
  if (env.context.config().digests.max_entries == 0) {
    return AdminError{1105, "HY000", "shardproxy admin: query digests are off (digests.max_entries: 0)"};
  }
  std::vector<std::vector<DigestStats>> per_worker;
  for (Worker* w : env.context.workers) {
    auto copy = std::make_shared<std::vector<DigestStats>>();
    if (runOnWorker(*w, [w, copy] { *copy = w->observer().digests().snapshot(); })) per_worker.push_back(*copy);
  }
  LocalResult r;
  r.columns = {"digest",       "count",         "errors",        "rows",      "avg_shards", "total_ms",
               "avg_ms",       "p50_ms",        "p99_ms",        "max_ms",    "first_seen", "last_seen",
               "slowest_shard", "slowest_shard_p99_ms", "shard_times"};
  auto ms = [](uint64_t us) { return fmt::format("{:.3f}", static_cast<double>(us) / 1000.0); };
  for (const auto& d : mergeDigests(per_worker, limit)) {
    const double count = static_cast<double>(std::max<uint64_t>(d.count, 1));
    const DigestShardStats* slowest = d.slowestShard();
    r.rows.push_back(Row{d.text, std::to_string(d.count), std::to_string(d.errors), std::to_string(d.rows),
                         fmt::format("{:.1f}", static_cast<double>(d.shards) / count), ms(d.total_us),
                         fmt::format("{:.3f}", static_cast<double>(d.total_us) / 1000.0 / count),
                         ms(d.percentileUs(0.5)), ms(d.percentileUs(0.99)), ms(d.max_us), isoMillis(d.first_seen_ms),
                         isoMillis(d.last_seen_ms), slowest ? slowest->shard + "@" + slowest->backend : "-",
                         d.scatters ? ms(d.slowestShardPercentileUs(0.99)) : "-", digestShardTimes(d)});
  }
  return r;
}

// The metrics endpoint's text as rows: `series` (name and labels) and `value`;
// histogram buckets are left out (their _sum and _count stay).
LocalResult showStats(AdminEnv& env) {
  LocalResult r;
  r.columns = {"series", "value"};
  const std::string text = renderMetrics(collectMetrics(env.context));
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    std::string_view series = line.substr(0, space);
    if (series.substr(0, series.find('{')).ends_with("_bucket")) continue;
    r.rows.push_back(Row{std::string(series), std::string(line.substr(space + 1))});
  }
  return r;
}

AdminReply resetDigests(AdminEnv& env) {
  for (Worker* w : env.context.workers) {
    if (!runOnWorker(*w, [w] { w->observer().digests().clear(); })) {
      return AdminError{1105, "HY000", "shardproxy admin: a worker did not answer; digests partly reset"};
    }
  }
  return AdminOk{};
}

LocalResult showErrors(AdminEnv& env) {
  LocalResult r;
  r.columns = {"n", "problem"};
  auto problems = env.maps.lastProblems();
  for (size_t i = 0; i < problems.size(); ++i) r.rows.push_back(Row{std::to_string(i + 1), problems[i]});
  return r;
}

// The proxies registered in etcd under their leases.
AdminReply showFleet(AdminEnv& env) {
  FleetAgent* fleet = env.context.fleet;
  if (!fleet) return AdminError{1105, "HY000", "shardproxy admin: this proxy is not in a fleet (no 'fleet:' in its config)"};
  auto members = fleet->members();
  if (!members) {
    auto running = env.context.shard_map.load();
    return AdminError{1105, "HY000",
                      fmt::format("shardproxy admin: fleet: {}; this proxy ({}) serves version {}", members.error(),
                                  fleet->name(), running ? running->version() : 0)};
  }
  LocalResult r;
  r.columns = {"name", "admin", "version", "checksum", "applied_at", "map_revision", "this_proxy"};
  for (const auto& m : *members) {
    r.rows.push_back(Row{m.name, m.admin, std::to_string(m.version), m.checksum.substr(0, 12), m.applied_at,
                         std::to_string(m.map_revision), m.name == fleet->name() ? "yes" : "no"});
  }
  return r;
}

LocalResult help() {
  LocalResult r;
  r.columns = {"command", "description"};
  for (auto& [command, text] : adminCommandHelp()) r.rows.push_back(Row{command, text});
  return r;
}

// The start-up probes of clients (mariadb sends `select @@version_comment limit 1`).
LocalResult selectVariables(const AdminCommand& command, AdminEnv& env) {
  LocalResult r;
  Row row;
  for (const auto& item : command.items) {
    r.columns.push_back(item.label);
    std::optional<std::string> value;
    if (item.name == "version_comment") value = "shardproxy admin interface (HELP lists the commands)";
    else if (item.name == "version" || item.name == "version()") value = env.context.server_version;
    else if (item.name == "user()" || item.name == "current_user()") value = env.user + "@" + env.peer;
    else if (item.name == "connection_id()") value = std::to_string(env.connection_id);
    else if (item.name == "autocommit") value = "1";
    row.push_back(std::move(value));
  }
  r.rows.push_back(std::move(row));
  return r;
}

}  // namespace

std::string refusalMessage(const std::string& summary, const std::vector<std::string>& problems, size_t budget) {
  std::string out = summary + ":";
  size_t shown = 0;
  for (const auto& p : problems) {
    std::string tail = fmt::format("\n(SHOW SHARD MAP ERRORS lists all {})", problems.size());
    if (out.size() + 1 + p.size() + tail.size() > budget) break;
    out += "\n" + p;
    ++shown;
  }
  if (shown < problems.size()) out += fmt::format("\n(SHOW SHARD MAP ERRORS lists all {})", problems.size());
  return out;
}

AdminReply executeAdminCommand(const AdminCommand& command, AdminEnv& env) {
  using K = AdminCommandKind;
  switch (command.kind) {
    case K::kShowShardMap: return showShardMap(env.context);
    case K::kShowShardMapHistory: return showHistory(env);
    case K::kShowShardMapErrors: return showErrors(env);
    case K::kReloadShardMap: return swapReply(env.maps.reload("admin:" + env.user));
    case K::kRollbackShardMap: return swapReply(env.maps.rollback(command.version, "admin:" + env.user));
    case K::kShowFleet: return showFleet(env);
    case K::kShowBackends: return showBackends(env);
    case K::kShowSessions: return showSessions(env);
    case K::kShowOverload: return showOverload(env);
    case K::kShowHotKeys: return showHotKeys(env.context, command.limit);
    case K::kShowTransactions: return showTransactions(env.context);
    case K::kShowRoute: return showRoute(env, command.statement);
    case K::kShowDigests: return showDigests(env, command.limit);
    case K::kResetDigests: return resetDigests(env);
    case K::kShowStats: return showStats(env);
    case K::kShowSchemaDrift:  // reads the backends: run by the admin session itself (queueSchemaDrift)
      return AdminError{1105, "HY000", "shardproxy admin: SHOW SCHEMA DRIFT runs asynchronously"};
    case K::kHelp: return help();
    case K::kSelectVariables: return selectVariables(command, env);
    case K::kIgnoredSet:
    case K::kUse:
    case K::kEmpty: return AdminOk{};
  }
  return AdminError{1105, "HY000", "shardproxy admin: unhandled command"};
}

}  // namespace sp::proxy
