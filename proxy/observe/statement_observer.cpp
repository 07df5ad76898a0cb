#include "proxy/observe/statement_observer.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "conf/config.hpp"
#include "proxy/core/proxy_context.hpp"
#include "routing/plan_cache.hpp"

namespace sp::proxy {

namespace {

// Digests and the slow log read at most this much of a statement, as
// MariaDB's performance_schema caps digests (max_digest_length): a 20 MB
// IN list would otherwise be normalized whole (a ParamValue per literal,
// about 2 GB) after it was refused, and stored as a 20 MB digest.
constexpr size_t kMaxObservedBytes = 64 * 1024;

std::string_view observedPart(std::string_view sql) { return sql.substr(0, std::min(sql.size(), kMaxObservedBytes)); }

std::string truncationNote(std::string_view sql) {
  return sql.size() > kMaxObservedBytes ? " ... (" + std::to_string(sql.size()) + " bytes)" : std::string();
}

int64_t unixMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}
}  // namespace

ObserverSettings observerSettings(const ProxyContext& context, unsigned worker_count) {
  const auto& cfg = context.config();
  ObserverSettings s;
  const size_t max_entries = cfg.digests.max_entries;
  s.digest_capacity = max_entries == 0 ? 0 : std::max<size_t>(1, max_entries / std::max(1u, worker_count));
  s.slow_log = context.slow_log;
  s.slow_query_us = uint64_t{cfg.log.slow_query_ms} * 1000;
  s.keep_values = cfg.log.slow_query_keep_values;
  // background.max_foreground_p99_ms reads each backend's statement latency from these records.
  s.enabled = cfg.server.metrics_listen.has_value() || s.digest_capacity > 0 || s.slow_log != nullptr ||
              cfg.background.max_foreground_p99_ms > 0;
  return s;
}

void StatementObserver::finish(StatementRecord& record, const Session& session) {
  if (!record.active) return;
  record.active = false;
  if (!settings_.enabled) return;
  const auto elapsed = std::chrono::steady_clock::now() - record.started;
  const auto micros = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  metrics_.record(record, static_cast<double>(micros) / 1e6);
  const bool slow = settings_.slow_log && micros >= settings_.slow_query_us;
  if ((digests_.capacity() > 0 || slow) && record.normalized.empty() && !record.sql.empty()) {
    // Not planned through the plan cache (session control, long or unlexable text).
    record.normalized = routing::normalizeQuery(observedPart(record.sql), {}).text + truncationNote(record.sql);
  }
  if (digests_.capacity() > 0 && !record.normalized.empty()) {
    digests_.record(record.normalized, record.error_code != 0, record.rows, record.fanout ? record.fanout : 1, micros,
                    unixMillis(), record.shards);
  }
  if (slow) {
    ++metrics_.slow_queries;
    logSlow(record, session, micros);
  }
}

void StatementObserver::logSlow(const StatementRecord& record, const Session& session, uint64_t micros) {
  SlowQueryEntry e;
  e.time_ms = unixMillis();
  e.user = session.user;
  e.client = session.client;
  e.connection_id = session.connection_id;
  e.plan = planLabelName(record.plan);
  e.table = record.table;
  e.digest = record.normalized;
  const std::string_view part = observedPart(record.sql);
  e.statement = (settings_.keep_values ? std::string(part) : routing::maskLiterals(part)) + truncationNote(record.sql);
  e.backends = record.backends;
  e.shards = record.shards;
  e.total_ms = static_cast<double>(micros) / 1000.0;
  e.rows = record.rows;
  e.error_code = record.error_code;
  settings_.slow_log->write(slowLogLine(e));
}

}  // namespace sp::proxy
