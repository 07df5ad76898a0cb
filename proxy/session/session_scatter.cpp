// A ClientSession's statements that span shards: the session checks that the
// statement may run now, borrows one connection per shard (brought to the
// session's state), hands them as channels to the scatter execution
// (scatter_execution.hpp), and gives them back.
#include <fmt/format.h>

#include "conf/config.hpp"
#include "proxy/observe/abuse_log.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/backend_shard_channel.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/pool_capacity.hpp"
#include "proxy/exec/scatter_execution.hpp"
#include "proxy/exec/shard_errors.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

// scatter.max_merge_bytes_total is spent: counted, logged (rate-limited), and
// worded so the client knows that retrying later may work.
protocol::ErrPacket mergeMemoryRefusal(ProxyContext& context, uint64_t held) {
  context.refused_merge_memory.fetch_add(1, std::memory_order_relaxed);
  const auto& budget = context.merge_budget;
  noteAbuse(AbuseKind::kMergeMemory, fmt::format("{} of {} bytes in use", budget.used(), budget.total()));
  return client_error::make(client_error::kMergeMemoryExhausted, fmt::format(
      "shardproxy: the statements spanning shards that run now hold all the merge memory "
      "(scatter.max_merge_bytes_total {} bytes; this one held {}); retry later, or narrow it (fewer groups, a key, "
      "a LIMIT)", budget.total(), held));
}

}  // namespace

// A statement spanning shards runs on pooled connections, one per shard, each
// an autocommitted read. Inside a transaction or under LOCK TABLES that is not
// what one server would do (the transaction's snapshot and locks, the lock
// set's table list), so it is refused. A session pinned by state that only its
// users need (a user variable, a temporary table, FOUND_ROWS()...) runs it
// like any other session, unless the statement uses that state itself or the
// state changes how every statement runs (connection_bound_state.hpp).
std::optional<protocol::ErrPacket> ClientSession::scatterRefusal(const parser::StatementInfo& info) const {
  if (inTransaction()) {
    return client_error::make(client_error::kCrossBackend,
        "shardproxy: a statement that spans shards cannot run inside a transaction; run it outside the transaction");
  }
  if (tables_locked_) {
    return client_error::make(client_error::kCrossBackend,
        "shardproxy: a statement that spans shards cannot run while LOCK TABLES is in force; UNLOCK TABLES first");
  }
  if (!pinned_) return std::nullopt;
  if (usesConnectionBoundState(info)) {
    return client_error::make(client_error::kCrossBackend, fmt::format(
        "shardproxy: this statement spans shards but uses state that lives on this session's connection to backend "
        "{} (user variables, temporary tables, locks, FOUND_ROWS() or prepared SQL)", pinned_pool_->name()));
  }
  if (!bound_.portable()) {
    return client_error::make(client_error::kCrossBackend, fmt::format(
        "shardproxy: a statement that spans shards cannot run while this session's connection to backend {} holds "
        "{}; reconnect or reset the connection (COM_RESET_CONNECTION) first", pinned_pool_->name(),
        bound_.unportableReasons()));
  }
  return std::nullopt;
}

awaitable<bool> ClientSession::runScatter(const routing::ScatterPlan& plan, const parser::StatementInfo& info,
                                          bool binary_rows, std::string_view sql) {
  // The shards' warnings stay on their connections: the session's area is
  // empty unless the scatter fails (queueError records that).
  diagnostics_.onSuccess(0);
  if (auto refusal = scatterRefusal(info)) {
    queueError(reply_seq_, *refusal);
    co_return co_await client_.flush();
  }
  if (auto shortfall = poolShortfall(worker_, plan.targets)) {
    queueError(reply_seq_, *shortfall);
    co_return co_await client_.flush();
  }
  const auto& scatter_config = worker_.context().config().scatter;
  const std::chrono::milliseconds timeout(scatter_config.shard_timeout_ms);
  // Each shard query is one autocommitted read: with the session's
  // autocommit=0 it would open a transaction on every shard that nothing
  // ever ends (scatter statements are refused inside transactions anyway).
  SessionState shard_state = desired_;
  shard_state.variables.erase("autocommit");
  std::vector<LentShard> borrowed(plan.targets.size());
  auto pools = scatterPools(plan, info, sql);
  if (!pools) co_return co_await client_.flush();
  // A slot of each server's budget (session_admission.cpp) before any connection.
  auto slots = co_await admitAll(*pools);
  if (!slots) co_return co_await client_.flush();
  // Borrowing all shards' connections is one step per worker (async_gate.hpp):
  // concurrent scatters never hold part of what they need while waiting.
  AsyncGate::Pass gate_pass = co_await worker_.multiShardGate().enter();
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    const auto& t = plan.targets[i];
    BackendPool* pool = (*pools)[i];
    // Pooled even when the session is pinned: scatterRefusal() let through only
    // statements that need nothing of the pinned connection.
    auto conn = co_await borrowPooled(*pool);  // sends the ERR itself on failure
    if (!conn) {
      releaseLent(borrowed);
      co_return true;
    }
    auto synced = co_await conn->sync(shard_state);
    if (!synced) {
      if (synced.error().kind == BackendError::Kind::kServer) queueError(reply_seq_, synced.error().toErrPacket());
      else queueError(reply_seq_, shardFailure(t, synced.error().message));
      conn->markBroken();
      pool->release(std::move(conn));
      releaseLent(borrowed);
      co_return co_await client_.flush();
    }
    borrowed[i].lend(*pool, std::move(conn), timeout);
  }
  gate_pass.release();
  std::vector<ScatterShard> shards;
  shards.reserve(borrowed.size());
  for (size_t i = 0; i < borrowed.size(); ++i) shards.push_back({borrowed[i].channel.get(), &plan.targets[i]});
  ScatterOptions options;
  options.client_capabilities = capabilities_;
  options.status_flags = statusFlags();
  options.binary_rows = binary_rows;
  options.max_merge_bytes = scatter_config.max_merge_bytes;
  options.shard_timeout = timeout;
  options.timed = record_.active;  // per-shard times for the slow-query log
  options.client_mariadb_capabilities = mariadb_capabilities_;
  // Every concurrent merge together (scatter.max_merge_bytes_total): freed when the statement ends.
  routing::MergeBudget::Reservation merge_memory(worker_.context().merge_budget);
  options.merge_memory = &merge_memory;
  PacketStreamSink client(client_);
  ScatterOutcome outcome = co_await executeScatter(shards, plan.merge, client, reply_seq_, options);
  if (outcome.merge_memory_exhausted) {
    queueError(outcome.error_seq, mergeMemoryRefusal(worker_.context(), merge_memory.held()));
  }
  merge_memory.release();
  if (outcome.error && outcome.error->error_code == client_error::kBackendLost.number) {
    // Cut by the proxy because the server stopped answering its probes
    // (BackendPool::markDown), not lost by chance: said so under its own
    // code, as for a routed statement (reportBackendFailure).
    for (const auto& lent : borrowed) {
      if (lent.pool == nullptr || lent.pool->probeDown().empty()) continue;
      if (outcome.error->message.find("on backend " + lent.pool->name() + ")") == std::string::npos) continue;
      outcome.error->error_code = client_error::kBackendStoppedAnswering.number;
      outcome.error->sql_state = client_error::kBackendStoppedAnswering.sql_state;
      outcome.error->message += fmt::format(" (backend {} stopped answering: {}; the statement was abandoned)",
                                            lent.pool->name(), lent.pool->probeDown());
      break;
    }
  }
  releaseLent(borrowed);
  slots->clear();  // the answer is read: the budgets' slots back
  record_.rows += outcome.rows;
  record_.merge_bytes += outcome.row_bytes;
  if (outcome.shard_timed_out) ++worker_.observer().metrics().shard_timeouts;
  if (outcome.client_failed) co_return false;
  if (outcome.error) {
    queueError(outcome.error_seq, *outcome.error);
  } else if (record_.active && !outcome.merge_memory_exhausted) {
    for (const auto& s : shards) record_.shards.push_back({s.target->shard, s.target->backend, s.micros, s.rows});
    record_.merge_peak_bytes = outcome.merge_peak_bytes;
  }
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
