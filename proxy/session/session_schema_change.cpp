// DDL on a logical table from a client with allow_ddl (docs/admin.md,
// "Schema changes"): handed to the schema-change runner (proxy/schema/,
// through proxy/core/schema_change_service.hpp), which applies it to every
// physical table; the client gets an OK when every table is done (or at once
// under schema.async), or the runner's error. Text and prepared alike.
#include <fmt/format.h>

#include "proxy/core/schema_change_service.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

std::optional<std::expected<routing::LogicalDdl, std::string>> ClientSession::logicalDdl(
    std::string_view sql, const parser::StatementInfo& info) {
  if (info.kind != parser::StatementKind::kDdl || info.multiple_statements) return std::nullopt;
  auto map = mapSnapshot();
  if (!map) return std::nullopt;
  return routing::recognizeLogicalDdl(sql, *map, dialect_);
}

awaitable<bool> ClientSession::runSchemaChange(std::expected<routing::LogicalDdl, std::string> ddl) {
  if (!ddl) {
    queueError(reply_seq_, client_error::make(client_error::kUnsupported, ddl.error()));
    co_return co_await client_.flush();
  }
  SchemaChangeService* service = worker_.context().schema_changes;
  if (service == nullptr) {
    queueError(reply_seq_, client_error::make(client_error::kUnsupported,
                                              "shardproxy: schema changes of sharded tables are not running"));
    co_return co_await client_.flush();
  }
  if (pinned_ || inTransaction() || tables_locked_) {
    // The server would commit the transaction first; the change runs on
    // connections of its own, so the proxy asks for that to be explicit.
    queueError(reply_seq_, client_error::make(client_error::kUnsupported,
        fmt::format("shardproxy: a change of sharded table {} runs on every backend outside this session: end the "
                    "transaction (COMMIT or ROLLBACK), UNLOCK TABLES and release session state first",
                    ddl->table)));
    co_return co_await client_.flush();
  }
  routing::LogicalDdl change = std::move(*ddl);
  std::string who = user_;
  AdminReply reply = co_await service->submit(std::move(change), std::move(who));
  if (auto* error = std::get_if<AdminError>(&reply)) {
    queueError(reply_seq_, protocol::ErrPacket{error->code, error->sql_state, error->message});
    co_return co_await client_.flush();
  }
  diagnostics_.onSuccess(0);
  co_return co_await sendOk(reply_seq_);
}

}  // namespace sp::proxy
