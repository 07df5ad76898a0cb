// Where a worker's statements are recorded once answered: counters
// (WorkerMetrics), query digests (DigestTable) and the slow-query log. The
// session calls finish() once per command; everything it needs travels in
// the StatementRecord. Owned by the worker; used on its thread only.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "proxy/observe/digest_table.hpp"
#include "proxy/observe/metrics.hpp"
#include "proxy/observe/slow_log.hpp"

namespace sp::proxy {

struct ProxyContext;

struct ObserverSettings {
  bool enabled = false;            // metrics endpoint, digests or slow log configured
  size_t digest_capacity = 0;      // this worker's share of digests.max_entries; 0 = off
  uint64_t slow_query_us = 0;
  bool keep_values = false;
  std::shared_ptr<SlowQueryLog> slow_log;  // null: no slow-query log
};

// The settings a worker gets from the config (its share of the digest bound).
ObserverSettings observerSettings(const ProxyContext& context, unsigned worker_count);

class StatementObserver {
 public:
  explicit StatementObserver(ObserverSettings settings)
      : settings_(std::move(settings)), digests_(settings_.digest_capacity) {}

  bool enabled() const { return settings_.enabled; }
  // Who ran the statement, for the slow-query log.
  struct Session {
    const std::string& user;
    const std::string& client;
    uint32_t connection_id;
  };
  void finish(StatementRecord& record, const Session& session);

  WorkerMetrics& metrics() { return metrics_; }
  const WorkerMetrics& metrics() const { return metrics_; }
  DigestTable& digests() { return digests_; }
  const DigestTable& digests() const { return digests_; }

 private:
  void logSlow(const StatementRecord& record, const Session& session, uint64_t micros);

  ObserverSettings settings_;
  WorkerMetrics metrics_;
  DigestTable digests_;
};

}  // namespace sp::proxy
