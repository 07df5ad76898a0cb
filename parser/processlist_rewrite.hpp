// information_schema.PROCESSLIST read by an application user (issue 30): the
// session answers it from its own sessions, not a backend's threads. The
// statement runs on a backend against a temporary table of the same
// structure filled with the proxy's rows (proxy/session/
// session_processlist_select.cpp), so every WHERE, ORDER BY, function and
// join keeps MariaDB's own semantics. This is the text half: finding the
// references and rewriting them, token by token, so that strings, comments
// and quoted names that merely spell them are left alone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "parser/dialect.hpp"

namespace sp::parser {

struct ProcesslistScope {
  // The session's default database is information_schema: a bare
  // `FROM PROCESSLIST` / `JOIN PROCESSLIST` names the table too.
  bool default_is_information_schema = false;
};

// True when `sql` names information_schema.PROCESSLIST (any case, bare or
// backquoted parts; bare after FROM/JOIN in `scope`'s information_schema).
bool readsProcesslistTable(std::string_view sql, const Dialect& dialect = {}, ProcesslistScope scope = {});

// `sql` with every such reference replaced by `table` (written as given, e.g.
// "`_shardproxy`.`PROCESSLIST`") and every CONNECTION_ID() call by
// `connection_id` (the session's id, not the backend thread's that would run
// it). nullopt when `sql` names no PROCESSLIST or the lexer cannot read it.
std::optional<std::string> rewriteProcesslistTable(std::string_view sql, std::string_view table,
                                                   uint64_t connection_id, const Dialect& dialect = {},
                                                   ProcesslistScope scope = {});

}  // namespace sp::parser
