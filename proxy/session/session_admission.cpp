// A ClientSession's statements and the servers' concurrency budgets
// (backends[].max_active_statements; proxy/core/backend_admission.hpp,
// docs/availability.md "Overload: per-backend budget"): which statements pass
// the queue, the refusals, and the slots of statements spanning servers.
#include <algorithm>

#include <fmt/format.h>

#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

AdmissionSlot ClientSession::enterBudget(BackendPool& pool, std::string_view key) {
  // The session's transaction (or table / named locks) lives on this
  // server: statements that may wait for its locks could hold every slot,
  // so its own statements never queue behind them (they still count).
  const bool holds_locks = pinned_ && pinned_pool_ == &pool &&
                           (txn_.inTransaction() || tables_locked_ || bound_.has(ConnectionBoundState::kNamedLocks));
  return worker_.context().admissions.enter(pool.name(), user_, key, holds_locks);
}

protocol::ErrPacket ClientSession::admissionRefusal(const AdmissionSlot& slot, const BackendPool& pool) const {
  using State = AdmissionSlot::State;
  const auto settings = worker_.context().admissions.settings();
  if (slot.state() == State::kInterrupted) {
    return client_error::make(client_error::kQueryInterrupted, "Query execution was interrupted");
  }
  if (slot.state() == State::kFull) {
    return client_error::make(client_error::kOverloadQueueFull, fmt::format(
        "shardproxy: backend server {} is overloaded: its {} statement slots (backends[].max_active_statements) are "
        "taken and {} statements wait already (overload.max_queued_per_backend); nothing ran, retry later",
        pool.name(), slot.budget(), settings.max_queued));
  }
  return client_error::make(client_error::kOverloadTimeout, fmt::format(
      "shardproxy: backend server {} is overloaded: waited {} ms (overload.queue_timeout_ms = {}) for one of its {} "
      "statement slots (backends[].max_active_statements); nothing ran, retry later",
      pool.name(), slot.waited().count(), settings.queue_timeout.count(), slot.budget()));
}

awaitable<std::optional<std::vector<AdmissionSlot>>> ClientSession::admitAll(const std::vector<BackendPool*>& pools,
                                                                             std::string_view key) {
  std::vector<BackendPool*> servers = pools;
  std::sort(servers.begin(), servers.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  servers.erase(std::unique(servers.begin(), servers.end(), [](auto* a, auto* b) { return a->name() == b->name(); }),
                servers.end());
  std::vector<AdmissionSlot> slots;
  slots.reserve(servers.size());
  for (BackendPool* pool : servers) {
    AdmissionSlot slot = enterBudget(*pool, key);
    if (slot.state() == AdmissionSlot::State::kQueued) {
      co_await worker_.context().admissions.wait(slot, &admission_wait_);
    }
    if (!slot.admitted()) {
      queueError(reply_seq_, admissionRefusal(slot, *pool));
      co_return std::nullopt;  // the slots taken so far go back with `slots`
    }
    slots.push_back(std::move(slot));
  }
  co_return slots;
}

std::string ClientSession::admissionKey(const routing::Plan& plan) {
  // One key value: one conversation. Several (an IN list) or none: the
  // statement counts for its user only.
  if (!plan.table || plan.key_values.size() != 1) return {};
  return fmt::format("{}:{}", plan.table->name, plan.key_values.front());
}

std::optional<std::vector<BackendPool*>> ClientSession::scatterPools(const routing::ScatterPlan& plan,
                                                                     const parser::StatementInfo& info,
                                                                     std::string_view sql) {
  std::vector<BackendPool*> pools;
  pools.reserve(plan.targets.size());
  std::vector<parser::Token> read_tokens;  // replica reads decide on them: lexed once for every shard
  for (const auto& t : plan.targets) {
    BackendPool* pool = worker_.pool(t.backend);
    if (!pool) {
      queueError(reply_seq_, client_error::make(client_error::kGeneric,
                                                "shardproxy: shard map names unknown backend " + t.backend));
      return std::nullopt;
    }
    // A replica when the session reads there and one has its writes already
    // (no waiting: one slow replica would hold every shard's connection).
    if (!sql.empty() && !pool->config().replicas.empty()) {
      if (read_tokens.empty()) read_tokens = parser::tokenize(sql, dialect_);
      pool = readPoolNow(*pool, info, sql, read_tokens);
    }
    pools.push_back(pool);
  }
  return pools;
}

}  // namespace sp::proxy
