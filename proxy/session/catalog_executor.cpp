// The logical catalog of a ClientSession (routing/catalog.hpp): a catalog
// statement runs, as planned, on one or a few backends; the rows come back
// whole (catalog results are small), pass routing's CatalogRowFilter and go
// to the client under the server's own column definitions.
#include <fmt/format.h>

#include <algorithm>

#include "parser/text_search.hpp"
#include "conf/config.hpp"
#include "protocol/constants.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "routing/catalog.hpp"
#include "routing/prepare_target.hpp"

namespace sp::proxy {

using protocol::Command;

namespace {

// A cheap look before the catalog planner tokenizes a SELECT.
bool mentionsCatalog(std::string_view sql) { return parser::containsIgnoringAsciiCase(sql, "information_schema"); }

}  // namespace

std::optional<routing::CatalogPlan> ClientSession::catalogPlan(std::string_view sql, const parser::StatementInfo& info) {
  using K = parser::StatementKind;
  if (info.multiple_statements) return std::nullopt;
  // With information_schema as the default database, `FROM TABLES` reads
  // the catalog too, without the word in the text.
  if (info.kind != K::kShow && info.kind != K::kExplain &&
      !(info.kind == K::kSelect && (mentionsCatalog(sql) || routing::isInformationSchemaDatabase(desired_.database)))) {
    return std::nullopt;
  }
  if (!usesLogicalCatalog()) return std::nullopt;
  auto map = mapSnapshot();
  if (!map) return std::nullopt;
  return routing::planCatalog(sql, *map, worker_.context().config().default_backend, dialect_, desired_.database);
}

std::optional<protocol::ErrPacket> ClientSession::catalogPrepareRefusal(std::string_view sql) {
  if (!usesLogicalCatalog()) return std::nullopt;
  auto text = routing::sqlPrepareText(sql, dialect_);
  if (!text) return std::nullopt;
  if (!catalogPlan(*text, parser::classify(*text, dialect_))) return std::nullopt;
  return client_error::make(client_error::kNotSupported,
      "shardproxy: PREPARE ... FROM of a catalog statement (SHOW, DESCRIBE, information_schema) would show the "
      "physical tables behind the logical ones; run it as a query, or prepare it with the binary protocol "
      "(server-side prepare in the driver)");
}

bool ClientSession::usesLogicalCatalog() const {
  const conf::UserAccount* account = worker_.context().config().findUser(user_);
  return account && !account->privileged && !account->physical_tables;
}

awaitable<std::expected<BackendConnection::TextResult, protocol::ErrPacket>> ClientSession::catalogQuery(
    BackendPool& pool, const std::string& sql) {
  std::unique_ptr<BackendConnection> conn;
  const bool on_pinned = pinned_ && pinned_pool_ == &pool;
  if (on_pinned) {
    conn = std::move(pinned_);
  } else {
    // A connection of its own, outside the session's transaction (like a
    // scatter's shard queries): a read of the catalog opens none.
    auto acquired = co_await pool.acquire(poolFlavour(), connection_id_);
    if (!acquired) {
      co_return std::unexpected(client_error::make(client_error::kBackendUnavailable,
          fmt::format("shardproxy: backend {} unavailable: {}", pool.name(), acquired.error().message)));
    }
    conn = std::move(*acquired);
    SessionState state = desired_;
    state.variables.erase("autocommit");
    if (auto synced = co_await conn->sync(state); !synced) {
      conn->markBroken();
      pool.release(std::move(conn));
      co_return std::unexpected(synced.error().toErrPacket());
    }
  }
  auto result = co_await conn->queryResult(sql);
  std::expected<BackendConnection::TextResult, protocol::ErrPacket> out;
  if (result) out = std::move(*result);
  else out = std::unexpected(result.error().toErrPacket());
  if (on_pinned) {
    pinned_ = std::move(conn);
    if (pinned_->broken()) giveBack(std::move(pinned_), pool, std::nullopt);
  } else {
    if (conn->status() & protocol::status::kInTrans) conn->markBroken();  // never pool an open transaction
    pool.release(std::move(conn));
  }
  co_return out;
}

awaitable<bool> ClientSession::runCatalog(const routing::CatalogPlan& plan, bool binary_rows) {
  auto map = mapSnapshot();
  const conf::UserAccount* account = worker_.context().config().findUser(user_);
  routing::AllowLists lists;
  if (account && account->allow_schemas) lists.schemas = &*account->allow_schemas;
  if (account && account->allow_tables) lists.tables = &*account->allow_tables;
  routing::CatalogRowFilter filter(*map, lists, desired_.database, plan.like);
  LocalResult result;
  for (size_t p = 0; p < plan.parts.size(); ++p) {
    const auto& part = plan.parts[p];
    BackendPool* pool = worker_.pool(part.backend);
    if (!pool) {
      queueError(reply_seq_, client_error::make(client_error::kGeneric,
                                                "shardproxy: shard map names unknown backend " + part.backend));
      co_return co_await client_.flush();
    }
    auto answer = co_await catalogQuery(*pool, part.sql);
    if (!answer) {
      queueError(reply_seq_, answer.error());
      co_return co_await client_.flush();
    }
    if (p == 0) {
      result.definitions = std::move(answer->columns);
      for (const auto& c : result.definitions) result.columns.push_back(c.name);
      filter.setColumns(result.definitions);
    } else if (answer->columns.size() != result.definitions.size()) {
      queueError(reply_seq_, client_error::make(client_error::kGeneric, fmt::format(
          "shardproxy: backend {} answered this catalog query with {} columns, backend {} with {}", part.backend,
          answer->columns.size(), plan.parts[0].backend, result.definitions.size())));
      co_return co_await client_.flush();
    }
    for (auto& row : answer->rows) {
      if (filter.accept(row, part.primary)) result.rows.push_back(std::move(row));
    }
  }
  diagnostics_.onSuccess(0);
  record_.onResponse(result.rows.size(), 0);
  co_return co_await sendLocalResult(result, binary_rows);
}

awaitable<bool> ClientSession::onFieldList(protocol::ByteView payload) {
  // COM_FIELD_LIST: table NUL wildcard. The table is checked as SHOW COLUMNS
  // FROM it would be (physical tables, allow lists); a logical table is
  // answered from its first physical table (the CLI's name completion).
  const auto body = payload.subspan(1);
  const auto nul = std::find(body.begin(), body.end(), uint8_t{0});
  const std::string table(body.begin(), nul);
  std::string quoted;
  for (char c : table) quoted += c == '`' ? std::string("``") : std::string(1, c);
  if (auto refused = accessRefusal("SHOW COLUMNS FROM `" + quoted + "`")) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  auto map = mapSnapshot();
  const routing::TableRule* rule = map && usesLogicalCatalog() ? map->findTable(table) : nullptr;
  BackendPool* pool = rule && !rule->shards.empty() ? worker_.pool(rule->shards.front().backend) : nullptr;
  if (!pool || (pinned_pool_ && pinned_pool_ != pool)) {
    co_return co_await onPassthrough(payload, protocol::ResponseKind::kFieldList, true);
  }
  protocol::Bytes rewritten{static_cast<uint8_t>(Command::kFieldList)};
  const std::string& physical = rule->shards.front().physical_table;
  rewritten.insert(rewritten.end(), physical.begin(), physical.end());
  rewritten.insert(rewritten.end(), nul, body.end());
  co_return co_await onPassthrough(rewritten, protocol::ResponseKind::kFieldList, true, pool);
}

}  // namespace sp::proxy
