// A ClientSession's reads on replicas (docs/availability.md): which pool a
// plain read goes to, read-your-writes, and the session's own switch
// (SET shardproxy_reads). The replica health it decides with is the
// monitor's last snapshot (proxy/ha/replica_monitor.hpp).
#include <fmt/format.h>

#include "conf/config.hpp"
#include "protocol/constants.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/session/worker.hpp"
#include "routing/conditions.hpp"
#include "routing/read_split.hpp"

namespace sp::proxy {
namespace {

using routing::equalsIgnoreCase;

std::string_view unquotedValue(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// Statements that change nothing a later read could see.
bool neverWrites(parser::StatementKind kind) {
  using K = parser::StatementKind;
  switch (kind) {
    case K::kSelect:  // a SELECT calling a writing function commits and reports its GTID
    case K::kShow:
    case K::kExplain:
    case K::kSet:
    case K::kUse:
    case K::kEmpty:
    case K::kBegin:
    case K::kRollback:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool ClientSession::setsReadsVariable(const parser::StatementInfo& info) const {
  if (info.kind != parser::StatementKind::kSet) return false;
  for (const auto& s : info.settings) {
    if (s.kind == parser::SessionSetting::Kind::kSystemVariable && s.name == routing::kReadsVariable) return true;
  }
  return false;
}

std::optional<protocol::ErrPacket> ClientSession::readsSetting(const parser::StatementInfo& info, bool apply) {
  if (info.settings.size() != 1 || info.multiple_statements) {
    return client_error::make(client_error::kNotSupported,
                              "shardproxy: set shardproxy_reads in a SET statement of its own "
                              "(SET @@session.shardproxy_reads = 'replica')");
  }
  std::string_view value = unquotedValue(info.settings.front().value);
  if (equalsIgnoreCase(value, "replica")) {
    if (apply) reads_override_ = conf::ReadTarget::kReplica;
  } else if (equalsIgnoreCase(value, "primary")) {
    if (apply) reads_override_ = conf::ReadTarget::kPrimary;
  } else if (equalsIgnoreCase(value, "default")) {
    if (apply) reads_override_.reset();
  } else if (value == "?") {
    return client_error::make(client_error::kNotSupported,
                              "shardproxy: shardproxy_reads takes a literal ('replica', 'primary' or DEFAULT), "
                              "not a parameter");
  } else {
    return client_error::make(client_error::kWrongValueForVar,
                              fmt::format("Variable 'shardproxy_reads' can't be set to the value of '{}' "
                                          "(shardproxy: 'replica', 'primary' or DEFAULT)",
                                          value));
  }
  return std::nullopt;
}

ClientSession::ReplicaChoice ClientSession::chooseReplica(BackendPool& primary, const parser::StatementInfo& info,
                                                          std::string_view sql,
                                                          std::span<const parser::Token> tokens) {
  if (primary.config().replicas.empty()) return {};  // one server: nothing to decide
  const auto hint = routing::readHint(sql);
  if (hint == routing::ReadHint::kPrimary) return {};
  if (hint == routing::ReadHint::kNone) {
    conf::ReadTarget target = conf::ReadTarget::kPrimary;
    if (reads_override_) {
      target = *reads_override_;
    } else if (const auto* account = worker_.context().config().findUser(user_)) {
      target = account->reads;
    }
    if (target != conf::ReadTarget::kReplica) return {};
  }
  // A transaction reads its own writes and its own snapshot: the primary.
  // So does autocommit=0, where this read would open one.
  if (pinned_ || inTransaction() || !(statusFlags() & protocol::status::kAutocommit)) return {};
  std::vector<parser::Token> own;
  if (tokens.empty()) {
    own = parser::tokenize(sql, dialect_);
    tokens = own;
  }
  if (!routing::replicaReadable(info, sql, tokens)) return {};
  const auto requirement = read_your_writes_.requirement(primary.name());
  if (requirement.primary_only) return {};
  auto health = worker_.context().replica_health.load();
  if (!health) return {};
  const auto pools = worker_.replicaPools(primary.name());
  // Round robin over the replicas that serve reads now, starting after the
  // one this session used last.
  for (size_t tried = 0; tried < pools.size(); ++tried) {
    BackendPool& pool = *pools[(replica_turn_ + tried) % pools.size()];
    const ServerHealth* server = health->find(pool.name());
    if (!server || !servesReads(*server) || pool.inBackoff()) continue;
    replica_turn_ = static_cast<uint32_t>((replica_turn_ + tried + 1) % pools.size());
    ReplicaChoice choice{&pool, std::nullopt};
    if (requirement.gtid && !positionCovers(server->gtid_current_pos, *requirement.gtid)) {
      choice.wait_for = requirement.gtid;
    }
    return choice;
  }
  return {};
}

awaitable<BackendPool*> ClientSession::readPool(BackendPool& primary, const parser::StatementInfo& info,
                                                std::string_view sql, std::span<const parser::Token> tokens) {
  ReplicaChoice choice = chooseReplica(primary, info, sql, tokens);
  if (!choice.pool) co_return &primary;
  auto& context = worker_.context();
  if (choice.wait_for) {
    if (!co_await waitForGtid(*choice.pool, *choice.wait_for)) {
      context.causal_fallbacks.fetch_add(1, std::memory_order_relaxed);
      co_return &primary;
    }
    context.causal_waits.fetch_add(1, std::memory_order_relaxed);
  }
  context.replica_reads.fetch_add(1, std::memory_order_relaxed);
  choice.pool->noteReplicaRead();
  co_return choice.pool;
}

BackendPool* ClientSession::readPoolNow(BackendPool& primary, const parser::StatementInfo& info, std::string_view sql,
                                        std::span<const parser::Token> tokens) {
  ReplicaChoice choice = chooseReplica(primary, info, sql, tokens);
  if (!choice.pool || choice.wait_for) return &primary;
  worker_.context().replica_reads.fetch_add(1, std::memory_order_relaxed);
  choice.pool->noteReplicaRead();
  return choice.pool;
}

awaitable<bool> ClientSession::waitForGtid(BackendPool& replica, const Gtid& gtid) {
  // Any connection of the replica will do: replication applies server-wide.
  auto borrowed = co_await replica.acquire(poolFlavour(), connection_id_);
  if (!borrowed) co_return false;
  auto conn = std::move(*borrowed);
  const auto timeout_ms = worker_.context().config().ha.causal_read_timeout_ms;
  auto rows = co_await conn->queryRows(fmt::format("SELECT MASTER_GTID_WAIT('{}-{}-{}', {}.{:03})", gtid.domain,
                                                   gtid.server, gtid.seq, timeout_ms / 1000, timeout_ms % 1000));
  replica.release(std::move(conn));
  // 0: applied; -1: timed out; NULL or an error: cannot tell.
  co_return rows && rows->size() == 1 && !rows->front().empty() && rows->front()[0] == std::string("0");
}

void ClientSession::afterPrimaryStatement(BackendPool& pool, const parser::StatementInfo& info,
                                          const protocol::SessionChanges& changes, bool tracked) {
  read_your_writes_.afterPrimaryStatement(pool.name(), changes, tracked, inTransaction(),
                                          !neverWrites(info.kind) || info.multiple_statements);
}

awaitable<bool> ClientSession::prepareReadsSetting(std::string sql, const parser::StatementInfo& info) {
  if (auto refused = readsSetting(info, false)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  ClientStatement statement;
  statement.sql = std::move(sql);
  statement.reads_setting = true;
  const LocalResult announced;  // SET: no columns
  co_return co_await prepareLocally(std::move(statement), announced);
}

awaitable<bool> ClientSession::executeReadsSetting(const ClientStatement& stmt) {
  if (auto refused = readsSetting(parser::classify(stmt.sql, dialect_), true)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  diagnostics_.onSuccess(0);
  co_return co_await sendOk(reply_seq_);
}

}  // namespace sp::proxy
