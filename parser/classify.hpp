// Statement classification for session handling: what kind of statement a
// COM_QUERY holds and which session state it changes. Lexer-based and fast;
// never fails (an unrecognised statement is kOther). Used by the proxy to
// track SET/USE/transactions and decide when a backend connection must stay
// pinned to the client session.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"
#include "parser/lexer.hpp"

namespace sp::parser {

enum class StatementKind : uint8_t {
  kEmpty,          // only whitespace/comments
  kSelect,
  kInsert,
  kReplace,
  kUpdate,
  kDelete,
  kSet,
  kUse,
  kBegin,          // BEGIN [WORK] / START TRANSACTION [...] / XA START|BEGIN xid
  kXa,             // XA END / PREPARE / COMMIT / ROLLBACK / RECOVER
  kCommit,
  kRollback,       // ROLLBACK [WORK] (not ROLLBACK TO SAVEPOINT: that is kSavepoint)
  kSavepoint,      // SAVEPOINT / RELEASE SAVEPOINT / ROLLBACK TO
  kLockTables,     // LOCK TABLE(S) / FLUSH TABLES WITH READ LOCK
  kUnlockTables,
  kShow,
  kExplain,        // EXPLAIN / DESCRIBE / DESC
  kDdl,            // CREATE / ALTER / DROP / TRUNCATE / RENAME
  kPrepareSql,     // PREPARE name FROM ...
  kExecuteSql,     // EXECUTE name [USING ...]
  kDeallocateSql,  // DEALLOCATE / DROP PREPARE
  kCall,
  kDo,
  kKill,           // KILL [HARD|SOFT] [CONNECTION|QUERY] ... (StatementInfo::kill)
  kOther,
};

// One assignment in a SET statement.
struct SessionSetting {
  enum class Kind : uint8_t {
    kSystemVariable,       // SET [SESSION|LOCAL|@@session.|@@local.|@@]name = expr
    kGlobalVariable,       // SET GLOBAL name / @@global.name (not session state; forwarded as is)
    kUserVariable,         // SET @name = expr
    kNames,                // SET NAMES charset [COLLATE collation]  (value = "charset" or "charset COLLATE coll")
    kCharacterSet,         // SET CHARACTER SET charset / SET CHARSET charset
    kSessionIsolation,     // SET SESSION TRANSACTION ISOLATION LEVEL ... / READ ONLY|WRITE (value = the tail text)
    kNextTransaction,      // SET TRANSACTION ... (applies to the next transaction only)
  };
  Kind kind = Kind::kSystemVariable;
  std::string name;        // lower-case variable name without @@/scope prefix ("sql_mode", "autocommit")
  std::string value;       // expression text exactly as written (e.g. "'STRICT_ALL_TABLES'", "0", "DEFAULT")

  bool operator==(const SessionSetting&) const = default;
};

// KILL [HARD | SOFT] [CONNECTION | QUERY] id. The id is the connection id the
// client saw in its handshake (the proxy's, not a backend's), so the proxy
// carries it out itself. Forms it cannot (KILL USER, KILL QUERY ID, an id
// that is not an integer literal) leave `unsupported` set to what was written.
struct KillRequest {
  bool query_only = false;  // KILL QUERY: the running statement, not the connection
  uint64_t id = 0;
  std::string unsupported;  // non-empty: refuse, naming this
  // KILL [QUERY] @name: the id is that user variable's value, as the server
  // reads it (CAST(@name AS UNSIGNED); NULL and non-numbers are 0). `id` is 0.
  std::string variable;
  bool operator==(const KillRequest&) const = default;
};

struct StatementInfo {
  StatementKind kind = StatementKind::kOther;
  std::vector<SessionSetting> settings;  // kSet only
  std::string database;                  // kUse only: unquoted database name
  KillRequest kill;                      // kKill only
  // Reasons a backend connection must stay with this session from now on:
  bool creates_temporary_table = false;  // CREATE TEMPORARY TABLE
  bool uses_named_lock = false;          // GET_LOCK( ... ) anywhere
  bool uses_user_variable = false;       // @name read or written anywhere (not @@system)
  bool uses_found_rows = false;          // SQL_CALC_FOUND_ROWS or FOUND_ROWS()
  bool multiple_statements = false;      // more than one statement separated by ';'
  // SET STATEMENT var = value FOR ...: the variables hold for that statement
  // only (the server reports them as changed; they are not session state).
  bool set_statement_for = false;
  // LAST_INSERT_ID() / @@identity / @@last_insert_id: reads the session's
  // last generated id, which the proxy carries across backend connections.
  bool uses_last_insert_id = false;
  // CONNECTION_ID() is called: the session may answer it itself
  // (parser/local_queries.hpp), so the exact form is checked only then.
  bool calls_connection_id = false;
  // Reads the diagnostics area the previous statement left on its connection:
  // SHOW WARNINGS / ERRORS, SHOW COUNT(*) WARNINGS / ERRORS, GET DIAGNOSTICS,
  // @@warning_count / @@error_count.
  bool reads_diagnostics = false;
  // START TRANSACTION WITH CONSISTENT SNAPSHOT: the snapshot is taken by the
  // statement itself, so it cannot wait for the first statement's backend.
  bool consistent_snapshot = false;
  // FROM / JOIN / INTO names a table (not DUAL, not @var): on the server such
  // a statement resets the diagnostics area even when it has no warnings,
  // while `SELECT 1`, `SET @x = 1`, `DO 0` leave the previous warnings.
  bool names_table = false;
  // LOAD DATA | XML [LOW_PRIORITY | CONCURRENT] LOCAL INFILE: the server asks
  // the client for the file (users[].local_infile).
  bool load_data_local = false;
};

StatementInfo classify(std::string_view sql, const Dialect& dialect = {});
// The same from the statement's tokens (tokenize(sql, dialect): significant
// tokens, then kEnd), lexed once for all readers (parser/analysis.hpp).
StatementInfo classify(std::string_view sql, std::span<const Token> tokens, const Dialect& dialect);

}  // namespace sp::parser
