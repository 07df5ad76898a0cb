#include "proxy/schema/schema_table_run.hpp"

#include <fmt/format.h>

#include <chrono>

#include "proxy/backend/backend_connection.hpp"
#include "routing/schema_drift.hpp"

namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  return out + "'";
}

awaitable<std::expected<std::string, std::string>> shapeOn(BackendConnection& conn, const std::string& table) {
  const std::string filter = " AND TABLE_NAME = " + quoted(table);
  const std::string columns =
      "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLLATION_NAME "
      "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()" + filter + " ORDER BY ORDINAL_POSITION";
  const std::string indexes =
      "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART "
      "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()" + filter +
      " ORDER BY INDEX_NAME, SEQ_IN_INDEX";
  auto c = co_await conn.queryRows(columns);
  if (!c) co_return std::unexpected(c.error().message);
  auto i = co_await conn.queryRows(indexes);
  if (!i) co_return std::unexpected(i.error().message);
  auto shapes = routing::shapesFromRows(*c, *i);
  auto it = shapes.find(table);
  if (it == shapes.end()) co_return std::string();
  std::string out;
  for (const auto& [name, def] : it->second.columns) out += "column " + name + " " + def + "\n";
  for (const auto& [name, def] : it->second.indexes) out += "index " + name + " " + def + "\n";
  co_return out;
}

}  // namespace

awaitable<std::expected<std::string, std::string>> readTableShape(const conf::BackendConfig& server,
                                                                  size_t max_packet_bytes, const std::string& table) {
  auto conn = co_await BackendConnection::open(server, 0, max_packet_bytes);
  if (!conn) co_return std::unexpected(conn.error().message);
  co_return co_await shapeOn(**conn, table);
}

namespace {

// 1050 table exists, 1060 duplicate column, 1061 duplicate key name, 1091
// cannot drop a column or key that is not there: what the same change made
// twice answers.
bool isAlreadyMadeError(uint16_t code) { return code == 1050 || code == 1060 || code == 1061 || code == 1091; }

// A resumed change's table whose definition is the changed one (as a table
// this change did), or, with none done yet, no longer the one before.
bool changedAlready(const TableRunInput& in, const std::string& shape) {
  return (!in.shape_after.empty() && shape == in.shape_after) ||
         (in.shape_after.empty() && !in.shape_before.empty() && shape != in.shape_before);
}

}  // namespace

awaitable<TableRunResult> runTableChange(const TableRunInput& in) {
  TableRunResult result;
  const routing::LogicalDdl& ddl = *in.ddl;
  auto conn = co_await BackendConnection::open(in.server, 0, in.max_packet_bytes);
  if (!conn) {
    result.error = "cannot connect: " + conn.error().message;
    co_return result;
  }
  auto shape = co_await shapeOn(**conn, in.table);
  if (!shape) {
    result.error = "reading its definition: " + shape.error();
    co_return result;
  }
  const bool create = ddl.kind == routing::LogicalDdlKind::kCreateTable;
  if (shape->empty() && !create) {
    if (in.role != "shard") {
      result.state = TableChangeState::kAbsent;  // not created yet: created from the shard's definition later
      co_return result;
    }
    result.error = "the table does not exist (SHOW SCHEMA DRIFT; CREATE TABLE " + ddl.table + " creates missing ones)";
    co_return result;
  }
  if (!shape->empty() && create) {
    result.state = TableChangeState::kAlready;
    result.shape = *shape;
    co_return result;
  }
  if (in.resuming && ddl.kind != routing::LogicalDdlKind::kTruncate && !create) {
    if (changedAlready(in, *shape)) {
      result.state = TableChangeState::kAlready;
      result.shape = *shape;
      co_return result;
    }
  }
  auto timeout = co_await (*conn)->command(protocol::Command::kQuery,
                                           fmt::format("SET SESSION lock_wait_timeout = {}", in.lock_wait_timeout_s));
  if (!timeout) {
    result.error = "SET lock_wait_timeout: " + timeout.error().message;
    co_return result;
  }
  std::string refusals;
  for (routing::DdlAlgorithm algorithm : routing::algorithmsToTry(ddl)) {
    const std::string sql = routing::physicalStatement(ddl, in.table, algorithm);
    const auto started = Clock::now();
    auto done = co_await (*conn)->command(protocol::Command::kQuery, sql);
    if (done) {
      result.state = TableChangeState::kDone;
      result.algorithm = std::string(routing::toString(algorithm));
      result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      auto after = co_await shapeOn(**conn, in.table);
      if (after) result.shape = *after;
      co_return result;
    }
    const BackendError& e = done.error();
    if (e.kind == BackendError::Kind::kServer && routing::isAlgorithmRefusal(e.code) &&
        algorithm != routing::DdlAlgorithm::kAsWritten) {
      refusals += (refusals.empty() ? "" : "; ") + std::string(routing::toString(algorithm)) + ": " + e.message;
      continue;
    }
    if (in.resuming && e.kind == BackendError::Kind::kServer && isAlreadyMadeError(e.code)) {
      // Made meanwhile by the statement of a run that was cut off (a proxy
      // killed while its ALTER waited for the table): judged by the table's
      // definition now, as before the attempt.
      auto now = co_await shapeOn(**conn, in.table);
      if (now && !now->empty() && changedAlready(in, *now)) {
        result.state = TableChangeState::kAlready;
        result.shape = *now;
        co_return result;
      }
    }
    result.error = e.kind == BackendError::Kind::kServer ? fmt::format("error {}: {}", e.code, e.message) : e.message;
    if (e.kind == BackendError::Kind::kServer && e.code == 1205) {
      result.error += fmt::format(" (a transaction held the table longer than schema.lock_wait_timeout_s = {} s)",
                                  in.lock_wait_timeout_s);
    }
    co_return result;
  }
  result.algorithm_refused = true;
  result.error = "MariaDB cannot make this change without blocking writes (" + refusals +
                 "): add ALGORITHM=COPY to the statement (writes to each table wait while it is rebuilt) and set "
                 "schema.allow_copy: true";
  co_return result;
}

}  // namespace sp::proxy
