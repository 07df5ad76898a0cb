#include "proxy/admin/metrics_text.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <fmt/format.h>

namespace sp::proxy {

namespace {

void appendLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
}

void appendHelp(std::string& out, std::string_view help) {
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
}

}  // namespace

std::string formatSampleValue(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  return fmt::format("{}", value);
}

void ExpositionWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  appendHelp(out_, help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void ExpositionWriter::series(std::string_view name, std::string_view suffix, const Labels& labels,
                              std::string_view le) {
  out_ += name;
  out_ += suffix;
  if (labels.empty() && le.empty()) {
    out_ += ' ';
    return;
  }
  out_ += '{';
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) out_ += ',';
    first = false;
    out_ += key;
    out_ += "=\"";
    appendLabelValue(out_, value);
    out_ += '"';
  }
  if (!le.empty()) {
    if (!first) out_ += ',';
    out_ += "le=\"";
    out_ += le;
    out_ += '"';
  }
  out_ += "} ";
}

void ExpositionWriter::sample(std::string_view name, const Labels& labels, uint64_t value) {
  series(name, "", labels, {});
  out_ += std::to_string(value);
  out_ += '\n';
}

void ExpositionWriter::sample(std::string_view name, const Labels& labels, double value) {
  series(name, "", labels, {});
  out_ += formatSampleValue(value);
  out_ += '\n';
}

void ExpositionWriter::histogram(std::string_view name, const Labels& labels, const Histogram& h) {
  uint64_t cumulative = 0;
  const auto bounds = h.bounds();
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < h.counts().size() ? h.counts()[i] : 0;
    std::string le = i < bounds.size() ? formatSampleValue(bounds[i]) : std::string("+Inf");
    series(name, "_bucket", labels, le);
    out_ += std::to_string(cumulative);
    out_ += '\n';
  }
  series(name, "_sum", labels, {});
  out_ += formatSampleValue(h.sum());
  out_ += '\n';
  series(name, "_count", labels, {});
  out_ += std::to_string(h.count());
  out_ += '\n';
}

namespace {

void renderStatements(ExpositionWriter& w, const WorkerMetrics& m) {
  w.family("shardproxy_statements_total", "counter",
           "Statements (COM_QUERY, COM_STMT_EXECUTE) by logical table, plan kind and outcome.");
  for (const auto& t : m.tables) {
    for (size_t p = 0; p < kPlanLabelCount; ++p) {
      for (int outcome = 0; outcome < 2; ++outcome) {
        uint64_t n = t.statements[p][outcome];
        if (n == 0) continue;
        w.sample("shardproxy_statements_total",
                 {{"table", t.table.empty() ? std::string_view("-") : std::string_view(t.table)},
                  {"plan", planLabelName(static_cast<PlanLabel>(p))},
                  {"outcome", outcome ? "error" : "ok"}},
                 n);
      }
    }
  }
  w.family("shardproxy_statement_duration_seconds", "histogram",
           "Time from a statement's arrival to the end of its answer, by plan kind.");
  for (size_t p = 0; p < kPlanLabelCount; ++p) {
    w.histogram("shardproxy_statement_duration_seconds", {{"plan", planLabelName(static_cast<PlanLabel>(p))}},
                m.latency[p]);
  }
  w.family("shardproxy_statement_errors_total", "counter", "Error packets sent to clients, by error code.");
  for (auto [code, n] : m.errors) w.sample("shardproxy_statement_errors_total", {{"code", std::to_string(code)}}, n);
  w.family("shardproxy_refusals_total", "counter", "Statements the planner refused, by error code (91xx).");
  for (auto [code, n] : m.refusals) w.sample("shardproxy_refusals_total", {{"code", std::to_string(code)}}, n);
  w.family("shardproxy_scatter_fanout_shards", "histogram",
           "Shards queried by one scatter or split write.");
  w.histogram("shardproxy_scatter_fanout_shards", {}, m.fanout);
  w.family("shardproxy_scatter_merge_rows_total", "counter", "Merged rows scatters sent to clients.");
  w.sample("shardproxy_scatter_merge_rows_total", {}, m.merge_rows);
  w.family("shardproxy_scatter_merge_bytes_total", "counter", "Bytes of the merged rows scatters sent to clients.");
  w.sample("shardproxy_scatter_merge_bytes_total", {}, m.merge_bytes);
  w.family("shardproxy_scatter_merge_buffer_bytes", "histogram",
           "Most bytes one scatter's merge held at once (sorting, grouping, DISTINCT; capped by scatter.max_merge_bytes).");
  w.histogram("shardproxy_scatter_merge_buffer_bytes", {}, m.merge_buffer);
  w.family("shardproxy_kills_total", "counter", "KILL statements carried out.");
  w.sample("shardproxy_kills_total", {}, m.kills);
  w.family("shardproxy_shard_timeouts_total", "counter", "Shards that did not answer within scatter.shard_timeout_ms.");
  w.sample("shardproxy_shard_timeouts_total", {}, m.shard_timeouts);
  w.family("shardproxy_slow_queries_total", "counter", "Statements written to the slow-query log.");
  w.sample("shardproxy_slow_queries_total", {}, m.slow_queries);
}

const WorkerMetrics::BackendCounters* countersOf(const WorkerMetrics& m, std::string_view backend) {
  for (const auto& b : m.backends) {
    if (b.backend == backend) return &b;
  }
  return nullptr;
}

// Per shard of each sharded table: statements, errors, rows (sorted by table, then shard).
void renderShards(ExpositionWriter& w, const WorkerMetrics& m) {
  struct Line {
    std::string_view table, shard;
    const WorkerMetrics::ShardCounters* c;
  };
  std::vector<Line> lines;
  for (const auto& t : m.tables) {
    for (const auto& [name, c] : t.shards) lines.push_back({t.table, name, &c});
  }
  std::sort(lines.begin(), lines.end(),
            [](const Line& a, const Line& b) { return std::tie(a.table, a.shard) < std::tie(b.table, b.shard); });
  auto perShard = [&](std::string_view name, std::string_view help, auto value) {
    w.family(name, "counter", help);
    for (const auto& l : lines) w.sample(name, {{"table", l.table}, {"shard", l.shard}}, uint64_t{value(*l.c)});
  };
  using C = WorkerMetrics::ShardCounters;
  perShard("shardproxy_shard_statements_total", "Statements that ran on the shard (a scatter counts on each of its shards).",
           [](const C& c) { return c.statements; });
  perShard("shardproxy_shard_statement_errors_total", "Statements on the shard that ended in an error.",
           [](const C& c) { return c.errors; });
  perShard("shardproxy_shard_rows_total", "Result rows the shard returned (before any merge).",
           [](const C& c) { return c.rows; });
}

void renderBackends(ExpositionWriter& w, const MetricsSnapshot& s) {
  auto perBackend = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    w.family(name, type, help);
    for (const auto& b : s.backends) w.sample(name, {{"backend", b.name}}, static_cast<uint64_t>(value(b)));
  };
  using B = MetricsSnapshot::Backend;
  perBackend("shardproxy_backend_statements_total", "counter", "Statements that ran on the backend.", [&](const B& b) {
    auto* c = countersOf(s.statements, b.name);
    return c ? c->statements : 0;
  });
  perBackend("shardproxy_backend_statement_errors_total", "counter", "Statements on the backend that ended in an error.",
             [&](const B& b) {
               auto* c = countersOf(s.statements, b.name);
               return c ? c->errors : 0;
             });
  perBackend("shardproxy_backend_rows_total", "counter",
             "Result rows the backend returned (routed statements, and each shard of a scatter).", [&](const B& b) {
               auto* c = countersOf(s.statements, b.name);
               return c ? c->rows : 0;
             });
  perBackend("shardproxy_backend_up", "gauge", "1 unless the pool marked the backend down after connect failures.",
             [](const B& b) { return b.pool.down ? 0 : 1; });
  perBackend("shardproxy_backend_pool_max_connections", "gauge", "Pool ceiling (all worker threads).",
             [](const B& b) { return b.pool.max; });
  perBackend("shardproxy_backend_pool_open_connections", "gauge", "Open (and opening) backend connections.",
             [](const B& b) { return b.pool.total; });
  perBackend("shardproxy_backend_pool_idle_connections", "gauge", "Idle pooled connections.",
             [](const B& b) { return b.pool.idle; });
  perBackend("shardproxy_backend_pool_in_use_connections", "gauge", "Connections lent to sessions.",
             [](const B& b) { return b.pool.in_use; });
  perBackend("shardproxy_backend_pool_waiting", "gauge", "Statements waiting for a free connection.",
             [](const B& b) { return b.pool.waiting; });
  w.family("shardproxy_backend_pool_wait_seconds", "histogram", "Time to get a connection from the pool.");
  for (const auto& b : s.backends) {
    w.histogram("shardproxy_backend_pool_wait_seconds", {{"backend", b.name}}, b.pool.wait_seconds);
  }
  // The same histogram background work yields to (background.max_foreground_p99_ms): a scatter counts on each backend.
  w.family("shardproxy_backend_statement_duration_seconds", "histogram",
           "Client-observed time of the statements each backend took part in.");
  for (const auto& b : s.backends) {
    if (const auto* c = countersOf(s.statements, b.name)) {
      w.histogram("shardproxy_backend_statement_duration_seconds", {{"backend", b.name}}, c->latency);
    }
  }
  perBackend("shardproxy_backend_connects_total", "counter", "Backend connections opened.",
             [](const B& b) { return b.pool.connects; });
  perBackend("shardproxy_backend_connect_errors_total", "counter", "Failed attempts to open a backend connection.",
             [](const B& b) { return b.pool.connect_errors; });
  perBackend("shardproxy_backend_broken_connections_total", "counter",
             "Connections discarded because they broke or were left dirty.", [](const B& b) { return b.pool.broken; });
  perBackend("shardproxy_backend_replaced_connections_total", "counter",
             "Connections closed because a connect-time limit (max_allowed_packet, net_buffer_length) changed after "
             "they logged in.",
             [](const B& b) { return b.pool.replaced; });
  perBackend("shardproxy_backend_replica_reads_total", "counter",
             "Statements sessions sent to this pool as replica reads (0 for primaries).",
             [](const B& b) { return b.pool.replica_reads; });
  perBackend("shardproxy_backend_down_transitions_total", "counter", "Times the backend was marked down.",
             [](const B& b) { return b.pool.down_transitions; });
  perBackend("shardproxy_backend_up_transitions_total", "counter", "Times a marked-down backend connected again.",
             [](const B& b) { return b.pool.up_transitions; });
}

// Each server's concurrency budget (backend_admission.hpp; label `server`).
void renderAdmissions(ExpositionWriter& w, const MetricsSnapshot& s) {
  auto perServer = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    w.family(name, type, help);
    for (const auto& a : s.admissions) w.sample(name, {{"server", a.server}}, value(a));
  };
  using A = AdmissionStats;
  perServer("shardproxy_backend_max_active_statements", "gauge",
            "The server's concurrency budget (backends[].max_active_statements; 0: none).",
            [](const A& a) { return uint64_t{a.budget}; });
  perServer("shardproxy_backend_active_statements", "gauge", "Statements in flight on the server now.",
            [](const A& a) { return uint64_t{a.active}; });
  perServer("shardproxy_backend_queued_statements", "gauge", "Statements waiting for one of the server's slots now.",
            [](const A& a) { return uint64_t{a.queued}; });
  perServer("shardproxy_backend_admitted_statements_total", "counter", "Statements admitted to the server.",
            [](const A& a) { return a.admitted; });
  perServer("shardproxy_backend_bypassed_statements_total", "counter",
            "Statements admitted past the queue: their transaction holds locks on the server.",
            [](const A& a) { return a.bypassed; });
  perServer("shardproxy_backend_queue_wait_seconds_total", "counter",
            "Time statements waited in the server's queue (admitted or refused).",
            [](const A& a) { return a.wait_seconds_sum; });
  perServer("shardproxy_backend_queue_waits_total", "counter", "Waits in the server's queue that ended.",
            [](const A& a) { return a.wait_count; });
  w.family("shardproxy_backend_queue_rejections_total", "counter",
           "Statements refused by the server's queue: timeout (9145), queue_full (9146), interrupted (KILL).");
  for (const auto& a : s.admissions) {
    w.sample("shardproxy_backend_queue_rejections_total", {{"server", a.server}, {"reason", "timeout"}}, a.rejected_timeout);
    w.sample("shardproxy_backend_queue_rejections_total", {{"server", a.server}, {"reason", "queue_full"}}, a.rejected_full);
    w.sample("shardproxy_backend_queue_rejections_total", {{"server", a.server}, {"reason", "interrupted"}}, a.interrupted);
  }
}

// Hot keys: serialisation (hot_key_gate.hpp), pacing (hot_key_pacer.hpp) and the
// policy's moves (proxy/move/hot_key_mover.hpp).
void renderHotKeys(ExpositionWriter& w, const MetricsSnapshot& s) {
  const auto& h = s.hot_keys;
  auto one = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    w.family(name, type, help);
    w.sample(name, {}, value);
  };
  one("shardproxy_hot_key_concurrency", "gauge", "Writes to one shard-key value in flight at once (0: off).",
      uint64_t{s.hot_key_concurrency});
  one("shardproxy_hot_key_active_writes", "gauge", "Writes holding a hot-key slot now (their transactions included).",
      uint64_t{h.active});
  one("shardproxy_hot_key_queued_writes", "gauge", "Writes waiting for a slot of their key now.", uint64_t{h.queued});
  one("shardproxy_hot_key_admitted_writes_total", "counter", "Writes given a slot of their key.", h.admitted);
  one("shardproxy_hot_key_serialised_writes_total", "counter", "Of those, writes that waited for it first.",
      h.serialised);
  one("shardproxy_hot_key_bypassed_writes_total", "counter",
      "Writes given a slot past the queue: their transaction holds locks.", h.bypassed);
  one("shardproxy_hot_key_wait_seconds_total", "counter", "Time writes waited for their key (admitted or refused).",
      h.wait_seconds_sum);
  one("shardproxy_hot_key_waits_total", "counter", "Waits for a key that ended.", h.wait_count);
  const auto& p = s.hot_key_pace;
  one("shardproxy_hot_key_max_per_second", "gauge", "Writes to one shard-key value per second (0: not paced).",
      uint64_t{s.hot_key_max_per_second});
  one("shardproxy_hot_key_paced_writes_total", "counter", "Writes that waited for their key's turn.", p.paced);
  one("shardproxy_hot_key_pace_wait_seconds_total", "counter", "Time writes waited for their key's turn.",
      p.wait_seconds_sum);
  one("shardproxy_hot_key_unpaced_writes_total", "counter",
      "Writes not paced because the pacer's memory was full of hot keys.", p.untracked);
  w.family("shardproxy_hot_key_rejections_total", "counter",
           "Writes refused by their key's queue: timeout (9148), queue_full (9149), interrupted (KILL); "
           "by its pace: paced (9147), paced_interrupted (KILL).");
  w.sample("shardproxy_hot_key_rejections_total", {{"reason", "timeout"}}, h.rejected_timeout);
  w.sample("shardproxy_hot_key_rejections_total", {{"reason", "queue_full"}}, h.rejected_full);
  w.sample("shardproxy_hot_key_rejections_total", {{"reason", "interrupted"}}, h.interrupted);
  w.sample("shardproxy_hot_key_rejections_total", {{"reason", "paced"}}, p.refused);
  w.sample("shardproxy_hot_key_rejections_total", {{"reason", "paced_interrupted"}}, p.interrupted);
  w.family("shardproxy_hot_key_auto_moves_total", "counter",
           "MOVE KEY of a hot key by the policy (overload.hot_key_auto_move): started, or refused by the move "
           "coordinator (both start its cooldown).");
  w.sample("shardproxy_hot_key_auto_moves_total", {{"result", "started"}}, s.hot_key_auto_moves_started);
  w.sample("shardproxy_hot_key_auto_moves_total", {{"result", "refused"}}, s.hot_key_auto_moves_refused);
}

// Global transactions (docs/observability.md, "Transactions across backends").
void renderTransactions(ExpositionWriter& w, const MetricsSnapshot& s) {
  const auto& t = s.transactions;
  w.family("shardproxy_global_transactions_total", "counter",
           "Global (XA) transactions ended, by outcome: committed in one phase (one backend), in two, rolled back.");
  w.sample("shardproxy_global_transactions_total", {{"outcome", "committed_one_phase"}}, t.committed_one_phase);
  w.sample("shardproxy_global_transactions_total", {{"outcome", "committed_two_phase"}}, t.committed_two_phase);
  w.sample("shardproxy_global_transactions_total", {{"outcome", "rolled_back"}}, t.rolled_back);
  auto one = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    w.family(name, type, help);
    w.sample(name, {}, value);
  };
  one("shardproxy_global_commit_failures_total", "counter", "COMMITs of global transactions that ended rolled back.",
      t.commit_failed);
  one("shardproxy_global_transaction_participants_total", "counter",
      "Branches of two-phase commits, summed (divide by the two-phase count for the mean).", t.participants);
  one("shardproxy_global_prepare_seconds_total", "counter", "XA END + XA PREPARE of every branch, summed over two-phase commits.",
      static_cast<double>(t.prepare_us) / 1e6);
  one("shardproxy_global_commit_seconds_total", "counter",
      "Decision write + XA COMMIT of every branch, summed over two-phase commits.", static_cast<double>(t.commit_us) / 1e6);
  one("shardproxy_global_transactions_open", "gauge", "Global transactions open now.", t.open);
  one("shardproxy_global_branches_in_doubt", "gauge", "Prepared branches the last recovery pass could not resolve.",
      t.in_doubt);
  one("shardproxy_xa_recovery_passes_total", "counter", "Recovery passes (XA RECOVER on every backend).",
      t.recovery_passes);
  w.family("shardproxy_xa_recovered_branches_total", "counter", "Prepared branches recovery resolved, by action.");
  w.sample("shardproxy_xa_recovered_branches_total", {{"action", "commit"}}, t.recovered_commits);
  w.sample("shardproxy_xa_recovered_branches_total", {{"action", "rollback"}}, t.recovered_rollbacks);
  one("shardproxy_xa_recovery_errors_total", "counter", "Backends a recovery pass could not read or resolve.",
      t.recovery_errors);
  one("shardproxy_xa_recovered_for_other_proxies_total", "counter",
      "Of the recovered branches: those of another fleet member that was gone (its lease expired or it left).",
      t.recovered_for_others);
  one("shardproxy_xa_decisions_unknown_total", "counter",
      "Two-phase commits whose decision write etcd did not confirm (9174: left prepared, settled by recovery).",
      t.decisions_unknown);
}

void renderServers(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_replica_reads_total", "counter", "Statements a replica answered instead of its primary.");
  w.sample("shardproxy_replica_reads_total", {}, s.replica_reads);
  w.family("shardproxy_causal_read_waits_total", "counter",
           "Replica reads that first waited for the session's last write (MASTER_GTID_WAIT) and got it.");
  w.sample("shardproxy_causal_read_waits_total", {}, s.causal_waits);
  w.family("shardproxy_causal_read_fallbacks_total", "counter",
           "Replica reads that the primary answered because the replica lacked the session's last write after "
           "ha.causal_read_timeout_ms.");
  w.sample("shardproxy_causal_read_fallbacks_total", {}, s.causal_fallbacks);
  if (s.topology && s.servers) {
    w.family("shardproxy_topology_changes", "gauge",
             "Role changes (SWITCHOVER, FAILOVER, REJOIN) this proxy made since it started.");
    w.sample("shardproxy_topology_changes", {}, s.topology->version);
    w.family("shardproxy_backend_primary", "gauge",
             "1 for the server that is each backend's primary now (labels backend, server).");
    for (const auto& g : s.topology->groups) {
      w.sample("shardproxy_backend_primary", {{"backend", g.backend}, {"server", g.primary}}, uint64_t{1});
    }
  }
  if (!s.servers) return;
  auto perServer = [&](std::string_view name, std::string_view help, auto value, bool replicas_only) {
    w.family(name, "gauge", help);
    for (const auto& server : s.servers->servers) {
      if (replicas_only && server.primary) continue;
      auto v = value(server);
      if (!v) continue;
      const std::string_view role = server.primary ? "primary" : server.fenced ? "fenced" : "replica";
      w.sample(name, {{"backend", server.backend}, {"server", server.name}, {"role", role}}, static_cast<double>(*v));
    }
  };
  using S = ServerHealth;
  perServer("shardproxy_server_up", "1 when the server's last probe answered.",
            [](const S& h) { return std::optional<int64_t>(h.answered ? 1 : 0); }, false);
  perServer("shardproxy_server_serving", "1 when the server may serve: a primary that answers, or a replica that "
            "replicates within ha.max_replica_lag_ms.",
            [](const S& h) { return std::optional<int64_t>(h.state == ServerState::kUp && h.answered ? 1 : 0); }, false);
  perServer("shardproxy_server_read_only", "@@global.read_only as last read.",
            [](const S& h) { return h.answered ? std::optional<int64_t>(h.read_only ? 1 : 0) : std::nullopt; }, false);
  perServer("shardproxy_server_replication_lag_seconds", "Seconds_Behind_Master as last read (absent when NULL).",
            [](const S& h) { return h.lag_seconds; }, true);
}

void renderClients(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_client_connections", "gauge", "Client connections by state (open includes the others).");
  w.sample("shardproxy_client_connections", {{"state", "open"}}, uint64_t{s.sessions});
  w.sample("shardproxy_client_connections", {{"state", "authenticated"}}, uint64_t{s.authenticated});
  w.sample("shardproxy_client_connections", {{"state", "in_transaction"}}, uint64_t{s.in_transaction});
  w.sample("shardproxy_client_connections", {{"state", "pinned"}}, uint64_t{s.pinned});
  w.family("shardproxy_user_connections", "gauge", "Logged-in client sessions per user.");
  for (const auto& [user, n] : s.users) w.sample("shardproxy_user_connections", {{"user", user}}, uint64_t{n});
  w.family("shardproxy_client_refused_total", "counter", "Client connections refused before the handshake.");
  w.sample("shardproxy_client_refused_total", {{"reason", "max_connections"}}, s.refused_max_connections);
  w.sample("shardproxy_client_refused_total", {{"reason", "per_host"}}, s.refused_per_host);
  w.family("shardproxy_client_closed_total", "counter", "Client connections the proxy closed, by reason.");
  w.sample("shardproxy_client_closed_total", {{"reason", "handshake_timeout"}}, s.handshake_timeouts);
  w.sample("shardproxy_client_closed_total", {{"reason", "handshake_too_large"}}, s.handshake_too_large);
  w.sample("shardproxy_client_closed_total", {{"reason", "idle_timeout"}}, s.idle_timeouts);
  w.sample("shardproxy_client_closed_total", {{"reason", "write_timeout"}}, s.write_timeouts);
  w.family("shardproxy_admin_commands_total", "counter", "Commands on the admin port, by outcome.");
  w.sample("shardproxy_admin_commands_total", {{"outcome", "ok"}}, s.admin_commands - s.admin_errors);
  w.sample("shardproxy_admin_commands_total", {{"outcome", "error"}}, s.admin_errors);
}

void renderCaches(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_plan_cache_hits_total", "counter", "Statements planned from a cached parse.");
  w.sample("shardproxy_plan_cache_hits_total", {}, s.plan_cache_hits);
  w.family("shardproxy_plan_cache_misses_total", "counter", "Statements whose normalized shape was parsed.");
  w.sample("shardproxy_plan_cache_misses_total", {}, s.plan_cache_misses);
  w.family("shardproxy_plan_cache_evictions_total", "counter", "Plan cache entries evicted (least recently used).");
  w.sample("shardproxy_plan_cache_evictions_total", {}, s.plan_cache_evictions);
  w.family("shardproxy_plan_cache_entries", "gauge", "Plan cache entries (all worker threads).");
  w.sample("shardproxy_plan_cache_entries", {}, s.plan_cache_entries);
  w.family("shardproxy_digest_entries", "gauge", "Query digests held (all worker threads).");
  w.sample("shardproxy_digest_entries", {}, s.digest_entries);
  w.family("shardproxy_digest_evictions_total", "counter", "Query digests evicted (least recently seen).");
  w.sample("shardproxy_digest_evictions_total", {}, s.digest_evictions);
}

void renderShardMap(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_shard_map_version", "gauge", "Version of the shard map in force.");
  w.sample("shardproxy_shard_map_version", {}, s.shard_map_version);
  w.family("shardproxy_shard_map_reloads_total", "counter", "RELOAD / ROLLBACK / SIGHUP outcomes.");
  w.sample("shardproxy_shard_map_reloads_total", {{"result", "applied"}}, s.reloads_applied);
  w.sample("shardproxy_shard_map_reloads_total", {{"result", "refused"}}, s.reloads_refused);
  w.family("shardproxy_shard_map_last_reload_timestamp_seconds", "gauge",
           "Unix time the map in force was published (start-up included).");
  w.sample("shardproxy_shard_map_last_reload_timestamp_seconds", {}, s.last_reload_seconds);
  if (s.fleet_session < 0) return;
  w.family("shardproxy_fleet_session", "gauge",
           "1 while the proxy is in session with etcd (lease and watch); 0 while it reconnects (serving its last map).");
  w.sample("shardproxy_fleet_session", {}, static_cast<uint64_t>(s.fleet_session));
  w.family("shardproxy_fleet_map_revision", "gauge",
           "etcd revision of the fleet map in force here; equal on every converged proxy.");
  w.sample("shardproxy_fleet_map_revision", {}, static_cast<uint64_t>(s.fleet_map_revision));
}

void renderLifecycle(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_partition_upkeep_runs_total", "counter",
           "ENSURE PARTITIONS runs (automatic and by hand); failed: at least one shard failed.");
  w.sample("shardproxy_partition_upkeep_runs_total", {{"result", "ok"}}, s.upkeep_runs_ok);
  w.sample("shardproxy_partition_upkeep_runs_total", {{"result", "failed"}}, s.upkeep_runs_failed);
  w.family("shardproxy_partitions_created_total", "counter", "Month partitions split out of pmax.");
  w.sample("shardproxy_partitions_created_total", {}, s.partitions_created);
  w.family("shardproxy_partition_upkeep_last_run_timestamp_seconds", "gauge", "Unix time the last upkeep run ended.");
  w.sample("shardproxy_partition_upkeep_last_run_timestamp_seconds", {}, s.last_upkeep_seconds);
  w.family("shardproxy_partition_missing_months", "gauge",
           "Months within partitions.ahead still without a partition after the last run (all shards).");
  w.sample("shardproxy_partition_missing_months", {}, s.missing_months);
  w.family("shardproxy_partition_pmax_rows", "gauge", "Rows in pmax (months without a partition) after the last run.");
  w.sample("shardproxy_partition_pmax_rows", {}, s.pmax_rows);
  w.family("shardproxy_archived_rows_total", "counter", "Rows moved to archive tables by ARCHIVE runs.");
  w.sample("shardproxy_archived_rows_total", {}, s.archived_rows);
  w.family("shardproxy_archive_batches_total", "counter", "Archive batches, by outcome (retried: the counts differed).");
  w.sample("shardproxy_archive_batches_total", {{"result", "moved"}}, s.archive_batches);
  w.sample("shardproxy_archive_batches_total", {{"result", "retried"}}, s.archive_retries);
  w.family("shardproxy_archive_dropped_partitions_total", "counter", "Month partitions exported, verified and dropped.");
  w.sample("shardproxy_archive_dropped_partitions_total", {}, s.dropped_partitions);
}

void renderChanges(ExpositionWriter& w, const MetricsSnapshot& s) {
  w.family("shardproxy_changes_events_total", "counter", "Row changes sent to change-stream consumers.");
  w.sample("shardproxy_changes_events_total", {}, s.change_events);
  w.family("shardproxy_changes_transactions_total", "counter", "Transactions with row changes sent to consumers.");
  w.sample("shardproxy_changes_transactions_total", {}, s.change_transactions);
  w.family("shardproxy_changes_maintenance_rows_total", "counter",
           "Row changes of maintenance sessions (moves, archiving) the readers dropped.");
  w.sample("shardproxy_changes_maintenance_rows_total", {}, s.change_maintenance_rows);
  w.family("shardproxy_changes_consumers", "gauge", "Change streams open now (HTTP and admin).");
  w.sample("shardproxy_changes_consumers", {}, s.change_consumers);
  w.family("shardproxy_changes_consumers_refused_total", "counter", "Streams refused at changes.max_consumers.");
  w.sample("shardproxy_changes_consumers_refused_total", {}, s.change_consumers_refused);
  w.family("shardproxy_changes_reader_errors_total", "counter", "Binlog readers of change streams lost and reopened.");
  w.sample("shardproxy_changes_reader_errors_total", {}, s.change_reader_errors);
  w.family("shardproxy_changes_lag_seconds", "gauge",
           "Seconds between the commit of the last transaction a stream sent and the send (0: no stream).");
  w.sample("shardproxy_changes_lag_seconds", {}, static_cast<double>(s.change_lag_seconds));
}

}  // namespace

std::string renderMetrics(const MetricsSnapshot& s) {
  ExpositionWriter w;
  w.family("shardproxy_build_info", "gauge", "Always 1; the labels say which build runs.");
  w.sample("shardproxy_build_info", {{"version", s.version}}, uint64_t{1});
  w.family("shardproxy_start_time_seconds", "gauge", "Unix time the proxy started.");
  w.sample("shardproxy_start_time_seconds", {}, s.start_time_seconds);
  renderStatements(w, s.statements);
  renderShards(w, s.statements);
  renderBackends(w, s);
  renderAdmissions(w, s);
  renderHotKeys(w, s);
  renderTransactions(w, s);
  renderServers(w, s);
  renderClients(w, s);
  renderCaches(w, s);
  renderShardMap(w, s);
  renderLifecycle(w, s);
  renderChanges(w, s);
  return w.take();
}

}  // namespace sp::proxy
