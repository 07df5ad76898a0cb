#include "proxy/admin/metrics_server.hpp"

#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <cmath>
#include <map>

#include "conf/config.hpp"
#include "proxy/net/http_request.hpp"
#include "proxy/net/side_listener.hpp"
#include "proxy/session/worker.hpp"

#ifndef SHARDPROXY_VERSION
#define SHARDPROXY_VERSION "dev"
#endif

namespace sp::proxy {

namespace {

constexpr std::string_view kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
const auto kStarted = std::chrono::system_clock::now();

double unixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void addPool(PoolStats& sum, const PoolStats& s, bool first) {
  sum.total += s.total;
  sum.idle += s.idle;
  sum.in_use += s.in_use;
  sum.max += s.max;
  sum.waiting += s.waiting;
  sum.connects += s.connects;
  sum.connect_errors += s.connect_errors;
  sum.broken += s.broken;
  sum.replaced += s.replaced;
  sum.replica_reads += s.replica_reads;
  sum.waits += s.waits;
  sum.down_transitions += s.down_transitions;
  sum.up_transitions += s.up_transitions;
  sum.wait_seconds.add(s.wait_seconds);
  sum.down = first ? s.down : (sum.down && s.down);
}

}  // namespace

MetricsSnapshot collectMetrics(ProxyContext& context) {
  MetricsSnapshot snap;
  snap.version = SHARDPROXY_VERSION;
  snap.start_time_seconds = std::floor(unixSeconds(kStarted));
  std::map<std::string, PoolStats> pools;  // by backend name; draining pools count with their backend
  std::map<std::string, bool> seen;
  for (Worker* w : context.workers) {
    auto observation = std::make_shared<Worker::Observation>();
    if (!runOnWorker(*w, [w, observation] { *observation = w->observe(); })) continue;
    const auto& o = *observation;
    snap.statements.add(o.metrics);
    for (const auto& p : o.pools) {
      bool first = !seen[p.name];
      seen[p.name] = true;
      addPool(pools[p.name], p.stats, first || p.draining ? first : false);
    }
    snap.plan_cache_hits += o.plan_cache_hits;
    snap.plan_cache_misses += o.plan_cache_misses;
    snap.plan_cache_evictions += o.plan_cache_evictions;
    snap.plan_cache_entries += o.plan_cache_entries;
    snap.digest_entries += o.digest_entries;
    snap.digest_evictions += o.digest_evictions;
    snap.sessions += o.sessions;
    snap.authenticated += o.authenticated;
    snap.in_transaction += o.in_transaction;
    snap.pinned += o.pinned;
    for (const auto& [user, n] : o.users) snap.users[user] += n;
  }
  for (auto& [name, stats] : pools) snap.backends.push_back({name, std::move(stats)});
  snap.refused_max_connections = context.refused_max_connections.load();
  snap.refused_per_host = context.refused_per_host.load();
  snap.handshake_timeouts = context.handshake_timeouts.load();
  snap.handshake_too_large = context.handshake_too_large.load();
  snap.idle_timeouts = context.idle_timeouts.load();
  snap.write_timeouts = context.write_timeouts.load();
  snap.servers = context.replica_health.load();
  snap.topology = context.topology.load();
  snap.replica_reads = context.replica_reads.load();
  snap.causal_waits = context.causal_waits.load();
  snap.causal_fallbacks = context.causal_fallbacks.load();
  snap.admissions = context.admissions.stats();
  snap.hot_keys = context.hot_keys.stats();
  snap.hot_key_concurrency = context.hot_keys.settings().concurrency;
  snap.hot_key_pace = context.hot_key_pacer.stats();
  snap.hot_key_max_per_second = context.hot_key_pacer.maxPerSecond();
  snap.hot_key_auto_moves_started = context.hot_key_auto_moves_started.load();
  snap.hot_key_auto_moves_refused = context.hot_key_auto_moves_refused.load();
  const auto& xa = context.xa.counters;
  snap.transactions = {xa.committed_one_phase.load(), xa.committed_two_phase.load(), xa.rolled_back.load(),
                       xa.commit_failed.load(), xa.participants.load(), xa.prepare_us.load(), xa.commit_us.load(),
                       xa.recovery_passes.load(), xa.recovered_commits.load(), xa.recovered_rollbacks.load(),
                       xa.recovery_errors.load(), context.xa.open().size(), context.xa.inDoubt().size(),
                       xa.recovered_for_others.load(), xa.decisions_unknown.load()};
  snap.admin_commands = context.admin_commands.load();
  snap.admin_errors = context.admin_errors.load();
  snap.statements.addAdminCommands(snap.admin_commands - snap.admin_errors, snap.admin_errors);
  auto map = context.shard_map.load();
  snap.shard_map_version = map ? map->version() : 0;
  snap.reloads_applied = context.reloads_applied.load();
  snap.reloads_refused = context.reloads_refused.load();
  snap.last_reload_seconds = static_cast<double>(context.last_reload_unix_ms.load() / 1000);
  if (context.config().fleet) {
    snap.fleet_session = context.fleet_session.load() ? 1 : 0;
    snap.fleet_map_revision = context.fleet_map_revision.load();
  }
  const auto& life = context.lifecycle;
  snap.upkeep_runs_ok = life.upkeep_runs_ok.load();
  snap.upkeep_runs_failed = life.upkeep_runs_failed.load();
  snap.partitions_created = life.partitions_created.load();
  snap.last_upkeep_seconds = static_cast<double>(life.last_upkeep_unix_s.load());
  snap.missing_months = life.missing_months.load();
  snap.pmax_rows = life.pmax_rows.load();
  snap.archived_rows = life.archived_rows.load();
  snap.archive_batches = life.archive_batches.load();
  snap.archive_retries = life.archive_retries.load();
  snap.dropped_partitions = life.dropped_partitions.load();
  const auto& changes = context.change_stats;
  snap.change_events = changes.events.load();
  snap.change_transactions = changes.transactions.load();
  snap.change_maintenance_rows = changes.maintenance_rows.load();
  snap.change_consumers_refused = changes.consumers_refused.load();
  snap.change_reader_errors = changes.reader_errors.load();
  snap.change_consumers = changes.consumers.load();
  snap.change_lag_seconds = changes.lag_seconds.load();
  return snap;
}

MetricsServer::MetricsServer(ProxyContext& context) : context_(context) {}

MetricsServer::~MetricsServer() { stop(); }

std::string MetricsServer::start() {
  const auto& hp = *context_.config().server.metrics_listen;
  asio::ip::address address;
  if (auto failed = server_.start(hp, "metrics_listen", "metrics port", address,
                                  [this](tcp::socket socket) { return serve(std::move(socket)); });
      !failed.empty()) {
    return failed;
  }
  if (!address.is_loopback() && !context_.config().server.metrics_allow_remote) {
    spdlog::warn("metrics_listen {} is not a loopback address; only loopback peers are answered "
                 "(server.metrics_allow_remote: true to accept others)",
                 conf::formatHostPort(hp));
  }
  spdlog::info("metrics endpoint listening on http://{}/metrics", conf::formatHostPort(hp));
  return {};
}

void MetricsServer::stop() { server_.stop(); }

awaitable<void> MetricsServer::serve(tcp::socket socket) {
  error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) co_return;
  auto answer = [&](std::string response) -> awaitable<void> {
    co_await asio::async_write(socket, asio::buffer(response), kNoThrow);
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  };
  if (!peer.address().is_loopback() && !context_.config().server.metrics_allow_remote) {
    co_await answer(httpResponse(403, "text/plain", "shardproxy: metrics are served to loopback peers only\n"));
    co_return;
  }
  // A slow or silent client is cut off: the timer closes the socket.
  asio::steady_timer deadline(socket.get_executor());
  deadline.expires_after(kRequestTimeout);
  bool timed_out = false;
  deadline.async_wait([&](const error_code& e) {
    if (e) return;
    timed_out = true;
    error_code ignored;
    socket.close(ignored);
  });
  std::string head;
  auto [read_ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(head, kMaxRequestBytes),
                                                      "\r\n\r\n", kNoThrow);
  if (timed_out) co_return;
  if (read_ec) {
    // not_found: the head did not end within kMaxRequestBytes.
    if (read_ec == asio::error::not_found) co_await answer(httpResponse(431, "text/plain", "request too large\n"));
    co_return;
  }
  auto request = parseHttpRequestHead(std::string_view(head).substr(0, n));
  if (!request) {
    co_await answer(httpResponse(request.error(), "text/plain", "bad request\n"));
    co_return;
  }
  const bool head_only = request->method == "HEAD";
  if (request->method != "GET" && !head_only) {
    co_await answer(httpResponse(405, "text/plain", "only GET and HEAD\n"));
    co_return;
  }
  if (request->path != "/metrics") {
    co_await answer(httpResponse(404, "text/plain", "not found: the metrics are at /metrics\n", head_only));
    co_return;
  }
  co_await answer(httpResponse(200, kExpositionType, renderMetrics(collectMetrics(context_)), head_only));
}

}  // namespace sp::proxy
