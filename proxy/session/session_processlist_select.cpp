// SELECT ... FROM information_schema.PROCESSLIST through the proxy (issue 30).
// Forwarded, it would list a backend's threads, as SHOW PROCESSLIST did:
// `WHERE ID = CONNECTION_ID()` would find nothing, and an id read there
// would name a server thread that KILL through the proxy cannot reach. For
// the users whose SHOW PROCESSLIST is the proxy's (session_processlist.cpp)
// the statement reads the same rows instead, and keeps MariaDB's own
// semantics for whatever it does with them (WHERE, ORDER BY, functions,
// joins) without an evaluator here: on a backend connection of its own, a temporary
// table with the server's own structure is filled with the rows, the
// statement runs with its references to the table pointed at it
// (parser/processlist_rewrite.hpp) and CONNECTION_ID() replaced by the
// session's id, the answer streams to the client, and the table is dropped
// before the connection goes anywhere else. The session's own state is not
// touched: the table never outlives the statement, so nothing pins.
#include <fmt/format.h>

#include <algorithm>

#include "parser/processlist_rewrite.hpp"
#include "protocol/constants.hpp"
#include "protocol/prepared.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/exec/backend_shard_channel.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "routing/prepare_target.hpp"

namespace sp::proxy {

using protocol::Command;

namespace {

// Named PROCESSLIST so that `PROCESSLIST.ID` in the client's statement still
// resolves; in the session's database (or the backend's configured one),
// where the backend account may create temporary tables. For this one
// statement it hides a real table of that name there.
std::string tableIn(std::string_view database) {
  std::string quoted = "`";
  for (char c : database) quoted += c == '`' ? std::string("``") : std::string(1, c);
  return quoted + "`.`PROCESSLIST`";
}
// The server's own columns (names, types, lengths, charsets) whatever its
// version. Aria, not the default InnoDB: a non-transactional temporary table
// opens no transaction under autocommit=0.
std::string createSql(std::string_view table) {
  return fmt::format("CREATE TEMPORARY TABLE {} ENGINE=Aria AS SELECT * FROM information_schema.PROCESSLIST WHERE 0",
                     table);
}
std::string dropSql(std::string_view table) { return fmt::format("DROP TEMPORARY TABLE IF EXISTS {}", table); }
bool equalsLower(std::string_view text, std::string_view lower) {
  return std::equal(text.begin(), text.end(), lower.begin(), lower.end(), [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b;
  });
}
// MariaDB shows at most this much of a statement in INFO (PROCESS_LIST_INFO_WIDTH).
constexpr size_t kInfoWidth = 65535;
// One INSERT stays far below any max_allowed_packet a backend is likely to have.
constexpr size_t kInsertBytes = 256 * 1024;

// Hex literals: the bytes as they are, whatever the connection's
// NO_BACKSLASH_ESCAPES or character_set_client.
void appendHex(std::string& out, std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out += "X'";
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  out += '\'';
}

// INSERTs of every row. IGNORE: the columns left out (STAGE, QUERY_ID, TID
// and any a later server adds) have no default in the copied structure, and
// take their type's zero as MariaDB shows them for a connection that has none.
std::vector<std::string> insertStatements(const std::vector<ProcessRow>& rows, std::string_view table) {
  std::vector<std::string> statements;
  std::string sql;
  for (const ProcessRow& r : rows) {
    if (sql.empty()) {
      sql = fmt::format("INSERT IGNORE INTO {} (ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO, TIME_MS, INFO_BINARY) "
                        "VALUES ",
                        table);
    } else {
      sql += ", ";
    }
    sql += fmt::format("({}, ", r.id);
    appendHex(sql, r.user);
    sql += ", ";
    appendHex(sql, r.host);
    sql += ", ";
    if (r.db.empty()) sql += "NULL";
    else appendHex(sql, r.db);
    sql += ", ";
    appendHex(sql, r.command);
    sql += fmt::format(", {}, '', ", r.seconds);
    const std::string_view info = std::string_view(r.info).substr(0, std::min(r.info.size(), kInfoWidth));
    std::string info_literal = "NULL";
    if (r.has_info) {
      info_literal.clear();
      appendHex(info_literal, info);
    }
    sql += info_literal;
    sql += fmt::format(", {}.000, ", r.seconds * 1000);
    sql += info_literal;
    sql += ')';
    if (sql.size() >= kInsertBytes) statements.push_back(std::move(sql)), sql.clear();
  }
  if (!sql.empty()) statements.push_back(std::move(sql));
  return statements;
}

// After `USE information_schema` a bare PROCESSLIST names the table too.
parser::ProcesslistScope scopeOf(std::string_view database) {
  parser::ProcesslistScope scope;
  scope.default_is_information_schema = equalsLower(database, "information_schema");
  return scope;
}

}  // namespace

bool ClientSession::readsLogicalProcesslist(std::string_view sql, const parser::StatementInfo& info) const {
  if (info.kind != parser::StatementKind::kSelect || info.multiple_statements) return false;
  if (!usesLogicalProcesslist()) return false;
  return parser::readsProcesslistTable(sql, dialect_, scopeOf(desired_.database));
}

std::optional<protocol::ErrPacket> ClientSession::processlistSelectRefusal(std::string_view sql,
                                                                           const parser::StatementInfo& info) {
  // The catalog tables (TABLES, COLUMNS, ...) are answered by rewriting the
  // rows a backend returns; read here on one backend they would show its
  // physical tables.
  if (!catalogPlan(sql, info)) return std::nullopt;
  return client_error::make(client_error::kNotSupported,
      "shardproxy: a statement reading information_schema.PROCESSLIST together with information_schema.TABLES, "
      "COLUMNS or the other catalog tables is not supported; read them in separate statements");
}

std::optional<protocol::ErrPacket> ClientSession::processlistSqlPrepareRefusal(std::string_view sql) {
  auto text = routing::sqlPrepareText(sql, dialect_);
  if (!text || !readsLogicalProcesslist(*text, parser::classify(*text, dialect_))) return std::nullopt;
  // EXECUTE runs on a backend, which would list its own threads.
  return client_error::make(client_error::kNotSupported,
      "shardproxy: PREPARE ... FROM of a statement reading information_schema.PROCESSLIST would list a server's "
      "threads, not the proxy's sessions; run it as a query, or prepare it with the binary protocol "
      "(server-side prepare in the driver)");
}

awaitable<bool> ClientSession::runProcesslistSelect(std::string_view sql, const parser::StatementInfo& info,
                                                    const protocol::StmtExecute* exec) {
  BackendPool& pool = defaultPool();
  std::string database = desired_.database;
  if (equalsLower(database, "information_schema") || equalsLower(database, "performance_schema")) database.clear();
  if (database.empty()) database = pool.config().database;
  std::optional<protocol::ErrPacket> refused;
  if (database.empty()) {
    refused = client_error::make(client_error::kNotSupported,
        "shardproxy: reading information_schema.PROCESSLIST needs a database to hold the proxy's rows for the "
        "statement; USE one first");
  } else if (info.uses_user_variable) {
    // The rows are read on a connection of their own, where the session's
    // user variables do not exist: refused rather than compared with NULL.
    refused = client_error::make(client_error::kNotSupported,
        "shardproxy: a statement reading information_schema.PROCESSLIST cannot use user variables; "
        "write their values into it");
  }
  const std::string table = tableIn(database);
  auto rewritten = parser::rewriteProcesslistTable(sql, table, connection_id_, dialect_, scopeOf(desired_.database));
  if (!refused && !rewritten) {
    refused = client_error::make(client_error::kNotSupported,
        "shardproxy: this statement no longer reads information_schema.PROCESSLIST in the session's database; "
        "prepare it again");
  }
  if (refused) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  const std::string drop = dropSql(table);
  const std::vector<std::string> inserts = insertStatements(co_await visibleProcesses(true), table);

  // A connection of its own, outside the session's transaction and state
  // (like a scatter's shard queries), synced to the session's settings.
  std::unique_ptr<BackendConnection> conn;
  {
    auto acquired = co_await pool.acquire(poolFlavour(), connection_id_);
    if (!acquired) {
      queueError(reply_seq_, client_error::make(client_error::kBackendUnavailable,
          fmt::format("shardproxy: backend {} unavailable: {}", pool.name(), acquired.error().message)));
      co_return co_await client_.flush();
    }
    conn = std::move(*acquired);
    SessionState state = desired_;
    state.variables.erase("autocommit");
    if (auto synced = co_await conn->sync(state); !synced) {
      queuePreparationFailure(pool, synced.error());
      conn->markBroken();
      pool.release(std::move(conn));
      co_return co_await client_.flush();
    }
  }
  auto hand_back = [&](std::unique_ptr<BackendConnection> c) {
    if (c->status() & protocol::status::kInTrans) c->markBroken();  // never pool an open transaction
    pool.release(std::move(c));
  };

  // A table left by an interrupted statement is dropped first: never shown.
  std::optional<BackendError> failed;
  if (auto r = co_await conn->command(Command::kQuery, drop); !r) failed = r.error();
  if (!failed) {
    if (auto r = co_await conn->command(Command::kQuery, createSql(table)); !r) failed = r.error();
  }
  for (size_t i = 0; !failed && i < inserts.size(); ++i) {
    if (auto r = co_await conn->command(Command::kQuery, inserts[i]); !r) failed = r.error();
  }
  if (failed) {
    queuePreparationFailure(pool, *failed);
    if (failed->kind == BackendError::Kind::kServer && !conn->broken()) {
      if (!co_await conn->command(Command::kQuery, drop)) conn->markBroken();
    } else {
      conn->markBroken();
    }
    hand_back(std::move(conn));
    co_return co_await client_.flush();
  }

  BackendShardChannel channel(*conn, pool.config(), std::chrono::milliseconds(pool.config().query_timeout_ms));
  PacketStreamSink client(client_);
  ForwardResult result;
  if (!exec) {
    result = co_await routeQuery(channel, *rewritten, client, capabilities_, reply_seq_);
  } else {
    // Prepared on this connection for this execute only: the statement
    // names a table that is gone once it has run.
    auto stmt = co_await conn->prepared(*rewritten);
    if (!stmt) {
      if (stmt.error().kind == BackendError::Kind::kServer) queueError(reply_seq_, stmt.error().toErrPacket());
      else reportBackendFailure(pool, reply_seq_, true);
      if (conn->broken() || !co_await conn->command(Command::kQuery, drop)) conn->markBroken();
      hand_back(std::move(conn));
      co_return co_await client_.flush();
    }
    protocol::Bytes execute;
    const bool encoded = static_cast<bool>(protocol::encode(protocol::retarget(*exec, stmt->id), execute));
    if (encoded) {
      result = co_await routeCommand(channel, execute, protocol::ResponseKind::kQuery, client, capabilities_,
                                     reply_seq_);
    }
    conn->statements().erase(*rewritten);
    protocol::Bytes close;
    protocol::encode(protocol::StmtClose{stmt->id}, close);
    conn->stream().append(close, 0);  // no answer: goes out ahead of the DROP
    if (!encoded) {
      queueError(reply_seq_, client_error::make(client_error::kMalformedPacket, "shardproxy: cannot encode parameters"));
      if (!co_await conn->command(Command::kQuery, drop)) conn->markBroken();
      hand_back(std::move(conn));
      co_return co_await client_.flush();
    }
  }
  record_.onResponse(result.rows, result.server_error ? result.error_code : 0);
  if (result.client_failed) {
    conn->markBroken();  // its answer may be half read
    hand_back(std::move(conn));
    co_return false;
  }
  if (result.backend_failed) {
    reportBackendFailure(pool, result.next_client_seq, true, result.timed_out);
    conn->markBroken();
    hand_back(std::move(conn));
    co_return co_await client_.flush();
  }
  co_await recordDiagnostics(result, info, *conn);
  // Dropped before the connection goes back: a pooled connection never
  // carries it to another session, a pinned one never shows it later.
  if (!co_await conn->command(Command::kQuery, drop)) conn->markBroken();
  hand_back(std::move(conn));
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
