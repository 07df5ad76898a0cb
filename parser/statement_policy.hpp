// What a statement needs beyond reading and writing rows of the session's
// tables: account and privilege changes, server administration, server-side
// files, DDL. Found by the lexer (comments, case, backticks and `/*! */`
// bodies are handled there), statement by statement: every statement of a
// multi-statement, the text of `PREPARE .. FROM '...'` and `EXECUTE IMMEDIATE
// '...'`, the bodies of stored programs and compound statements. The proxy
// refuses what a user's rights do not cover (routing/access_check.hpp);
// docs/security.md lists the statements.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {

enum class Need : uint8_t {
  // Server administration or account management: a global privilege
  // (PrivilegeNeed::privilege names it as MariaDB does: "SHUTDOWN",
  // "CREATE USER", "SUPER", "RELOAD", "FILE", ...).
  kGlobalPrivilege,
  // A command on a table of the `mysql` schema (INSTALL PLUGIN is an INSERT
  // into mysql.plugin for MariaDB): `command` on `database`.`object`.
  kSystemTable,
  // CREATE / DROP / ALTER DATABASE, SET PASSWORD (the `mysql` schema): `object`.
  kDatabase,
  // DDL on the application's objects: `command` ("CREATE", "DROP", "ALTER",
  // "INDEX", "CREATE VIEW", "TRIGGER", "DROP, ALTER") on `object` (the table,
  // view, routine or event as written, `database` when qualified).
  // `routine` is set for procedures, functions, events and packages, which
  // MariaDB refuses per database.
  kDdl,
  // Dynamic SQL whose text is not a literal (PREPARE s FROM @q, EXECUTE
  // IMMEDIATE CONCAT(..)): what it runs cannot be known before it runs.
  kUncheckedDynamicSql,
};

// PrivilegeNeed::statement of a KILL that runs later or elsewhere: in the
// text of PREPARE .. FROM / EXECUTE IMMEDIATE, or in a stored program's or
// compound statement's body. The proxy carries out a KILL sent as a statement
// (its id is a proxy connection id); one run by the server would name a
// backend thread, possibly another client's connection, so it is refused
// for every user (proxy/session/client_access.cpp).
inline constexpr std::string_view kNestedKillStatement = "KILL inside PREPARE, EXECUTE IMMEDIATE or a stored program";

struct PrivilegeNeed {
  Need need = Need::kGlobalPrivilege;
  std::string privilege;  // kGlobalPrivilege
  std::string command;    // kSystemTable, kDdl
  std::string database;   // kSystemTable; kDdl when qualified
  std::string object;     // kSystemTable, kDatabase, kDdl (may be empty when not found)
  bool routine = false;   // kDdl of a procedure / function / event / package
  std::string statement;  // what was recognised, for messages and tests ("SET PASSWORD", "LOAD_FILE()")

  bool operator==(const PrivilegeNeed&) const = default;
};

// Every need of `sql`, in text order (empty for plain DML, SELECT, SHOW, SET
// of session variables, transactions, CREATE/DROP TEMPORARY TABLE, ...).
// `backslash_escapes` false: the session runs with NO_BACKSLASH_ESCAPES, so
// strings are split where the server will split them (a backslash before a
// quote does not hide what follows).
std::vector<PrivilegeNeed> privilegesNeeded(std::string_view sql, bool backslash_escapes = true);
// The same reading `tokens` (tokenize(sql) under the default dialect, as the
// statement's analysis holds them; empty: lexed here).
std::vector<PrivilegeNeed> privilegesNeeded(std::string_view sql, std::span<const Token> tokens,
                                            bool backslash_escapes);

}  // namespace sp::parser
