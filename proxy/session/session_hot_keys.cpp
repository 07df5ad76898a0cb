// A ClientSession's statements and hot keys (overload.hot_key_*;
// proxy/core/hot_key_gate.hpp, hot_key_tracker.hpp; docs/availability.md
// "Overload: hot keys"). Every statement routed to one shard-key value is
// counted for SHOW HOT KEYS; a write to it takes a slot of its key first.
//
// The rule that keeps the serialiser from deadlocking with the server's row
// locks: only a session that holds no locks waits. An autocommit write, and
// a transaction's first write before it ran anything on a server, wait
// FIFO for their key; a statement of a transaction (or LOCK TABLES, named
// locks) that already ran on a server, or that keeps some key's slot, takes
// its slot at once (counted, never queued: the key's holders may be waiting
// for its locks). A transaction keeps each key's slot until it ends.
//
// overload.hot_key_max_per_second paces the same writes (hot_key_pacer.hpp)
// before they take a slot: a write that may not wait is not paced either.
#include <fmt/format.h>

#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

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

}  // namespace sp::proxy
