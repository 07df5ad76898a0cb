// A ClientSession's admission of its statements, in the order a statement
// meets it (docs/availability.md, "Overload"; docs/operations.md, "Statement
// limits"):
//   - statement_limits per user and per digest (statement_limit_table.hpp),
//     before each COM_QUERY and COM_STMT_EXECUTE alike: a prepared
//     statement's digest is that of its prepared text;
//   - hot keys (overload.hot_key_*; hot_key_gate.hpp, hot_key_pacer.hpp,
//     hot_key_tracker.hpp): every statement routed to one shard-key value is
//     counted for SHOW HOT KEYS; a write to it is paced, then takes a slot of
//     its key;
//   - the servers' concurrency budgets (backends[].max_active_statements;
//     backend_admission.hpp): which statements pass the queue, the refusals,
//     and the slots of statements spanning servers.
//
// The rule that keeps the hot-key serialiser from deadlocking with the
// server's row locks: only a session that holds no locks waits. An
// autocommit write, and a transaction's first write before it ran anything on
// a server, wait FIFO for their key; a statement of a transaction (or LOCK
// TABLES, named locks) that already ran on a server, or that keeps some key's
// slot, takes its slot at once (counted, never queued: the key's holders may
// be waiting for its locks), and is not paced either. A transaction keeps
// each key's slot until it ends.
#include <fmt/format.h>

#include <algorithm>

#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/wire.hpp"
#include "routing/plan_cache.hpp"

namespace sp::proxy {

std::optional<StatementLimits::Ticket> ClientSession::admitStatement(protocol::ByteView payload) {
  StatementLimits* limits = worker_.context().statement_limits;
  if (limits == nullptr || limits->empty()) return StatementLimits::Ticket{};
  std::string digest;
  if (limits->hasDigestRules()) {
    std::string_view sql;
    if (static_cast<protocol::Command>(payload[0]) == protocol::Command::kQuery) {
      if (auto query = protocol::decodeComQuery(payload)) sql = query->query;
    } else {
      protocol::Reader reader(payload.subspan(1));
      if (auto id = reader.u32()) {
        if (const ClientStatement* stmt = statements_.find(*id)) sql = stmt->sql;
      }
    }
    if (!sql.empty()) digest = routing::normalizeQuery(sql, {}).text;
  }
  auto outcome = limits->admit(user_, digest, std::chrono::steady_clock::now());
  if (auto* refusal = std::get_if<StatementLimits::Refusal>(&outcome)) {
    queueError(reply_seq_, client_error::make(refusal->rate ? client_error::kStatementRateLimited
                                                            : client_error::kStatementConcurrencyLimited,
                                              refusal->message));
    return std::nullopt;
  }
  return std::move(std::get<StatementLimits::Ticket>(outcome));
}

namespace {

bool writesRows(parser::StatementKind kind) {
  using K = parser::StatementKind;
  return kind == K::kInsert || kind == K::kReplace || kind == K::kUpdate || kind == K::kDelete;
}

}  // namespace

void ClientSession::setKeyTargets(Outbound& out, const routing::Plan& plan, const parser::StatementInfo& info) const {
  out.admission_key = admissionKey(plan);
  if (out.admission_key.empty() || plan.kind != routing::PlanKind::kRoute || plan.targets.size() != 1) return;
  const auto& target = plan.targets.front();
  out.hot_key = HotKeyTarget{plan.table->name, plan.key_values.front(), target.shard, target.backend,
                             writesRows(info.kind)};
}

awaitable<bool> ClientSession::enterHotKey(const Outbound& out, HotKeySlot& slot) {
  if (!out.hot_key) co_return true;
  auto& ctx = worker_.context();
  const HotKeyTarget& target = *out.hot_key;
  ctx.hot_key_stats.record(target.table, target.value, target.write, target.shard, target.backend);
  if (!target.write || hot_key_holds_.holds(out.admission_key)) co_return true;
  const bool serialise = ctx.hot_keys.enabled();
  const bool pace = ctx.hot_key_pacer.enabled();
  if (!serialise && !pace) co_return true;
  const bool holds_locks = !hot_key_holds_.empty() ||
                           (pinned_ && (txn_.inTransaction() || tables_locked_ ||
                                        bound_.has(ConnectionBoundState::kNamedLocks)));
  // A session holding locks never waits (the key's other writers may want them): not paced either.
  if (pace && !holds_locks && !co_await paceHotKey(out.admission_key, target)) co_return false;
  if (!serialise) co_return true;
  slot = ctx.hot_keys.enter(out.admission_key, holds_locks);
  if (slot.state() == HotKeySlot::State::kQueued) co_await ctx.hot_keys.wait(slot, &admission_wait_);
  if (!slot.refused()) co_return true;
  queueError(reply_seq_, hotKeyRefusal(slot, target));
  co_return false;
}

awaitable<bool> ClientSession::paceHotKey(const std::string& key, const HotKeyTarget& target) {
  auto& pacer = worker_.context().hot_key_pacer;
  const auto now = HotKeyPacer::Clock::now();
  const HotKeyPacer::Turn turn = pacer.reserve(key, now);
  if (turn.refused) {
    queueError(reply_seq_, client_error::make(client_error::kHotKeyPaced, fmt::format(
        "shardproxy: key {} of table {} is hot: its writes are paced at {} per second "
        "(overload.hot_key_max_per_second) and this one's turn is {} ms away, more than overload.queue_timeout_ms = {}; "
        "nothing ran, retry later",
        target.value, target.table, pacer.maxPerSecond(),
        std::chrono::duration_cast<std::chrono::milliseconds>(turn.at - now).count(), pacer.maxWait().count())));
    co_return false;
  }
  if (turn.at <= now) co_return true;
  const bool slept = co_await admission_wait_.sleepUntil(turn.at);
  pacer.noteWait(HotKeyPacer::Clock::now() - now, !slept);
  if (slept) co_return true;
  queueError(reply_seq_, client_error::make(client_error::kQueryInterrupted, "Query execution was interrupted"));
  co_return false;
}

void ClientSession::afterHotKey(HotKeySlot& slot, bool transactional) {
  if (!slot.admitted()) return;
  if (transactional && hot_key_holds_.keep(slot)) return;
  slot.release();
}

protocol::ErrPacket ClientSession::hotKeyRefusal(const HotKeySlot& slot, const HotKeyTarget& target) const {
  using State = HotKeySlot::State;
  const auto settings = worker_.context().hot_keys.settings();
  if (slot.state() == State::kInterrupted) {
    return client_error::make(client_error::kQueryInterrupted, "Query execution was interrupted");
  }
  if (slot.state() == State::kFull) {
    return client_error::make(client_error::kHotKeyQueueFull, fmt::format(
        "shardproxy: key {} of table {} is hot: {} writes to it are in flight (overload.hot_key_concurrency) and {} "
        "wait already (overload.hot_key_max_queued); nothing ran, retry later",
        target.value, target.table, slot.limit(), settings.max_queued));
  }
  return client_error::make(client_error::kHotKeyTimeout, fmt::format(
      "shardproxy: key {} of table {} is hot: waited {} ms (overload.queue_timeout_ms = {}) behind the {} writes to "
      "it in flight (overload.hot_key_concurrency); nothing ran, retry later",
      target.value, target.table, slot.waited().count(), settings.queue_timeout.count(), slot.limit()));
}

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
