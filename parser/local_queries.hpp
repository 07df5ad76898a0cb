// Statements whose answer belongs to the proxy, not to a backend: the
// session's own identity, which a pooled backend connection does not share.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "parser/lexer.hpp"

namespace sp::parser {

// For exactly `SELECT CONNECTION_ID() [[AS] alias] [;]` (any case, comments
// and spacing): the result column's name (the alias, or the call as
// written). The client must see the id of its proxy session, the one its
// handshake reported and KILL takes, not that of whichever backend
// connection runs the statement.
std::optional<std::string> connectionIdQuery(std::string_view sql);
// The same from the statement's tokens (default dialect; parser/analysis.hpp).
std::optional<std::string> connectionIdQuery(std::string_view sql, std::span<const Token> tokens);

// SHOW WARNINGS | ERRORS [LIMIT [offset,] n] and SHOW COUNT(*) WARNINGS |
// ERRORS [;]: the session answers them from its own diagnostics area
// (proxy/session/session_diagnostics.hpp), since the statement that left them ran on
// a pooled backend connection.
struct DiagnosticsQuery {
  bool errors_only = false;  // SHOW ERRORS
  bool count = false;        // SHOW COUNT(*) ...
  uint64_t offset = 0;
  std::optional<uint64_t> limit;
};
std::optional<DiagnosticsQuery> diagnosticsQuery(std::string_view sql);

// SHOW [FULL] PROCESSLIST [;]: true when FULL. The proxy lists its own
// sessions (proxy/session/session_processlist.cpp), with the ids KILL takes.
std::optional<bool> processlistQuery(std::string_view sql);

// GET [CURRENT] DIAGNOSTICS CONDITION <n> <target> = <item> [, ...]: the
// condition number when it is an integer literal (nullopt otherwise: another
// form, or a number given by a variable). A number outside the session's
// diagnostics area is answered as the server does (a 1758 condition added,
// proxy/session/session_diagnostics.hpp).
std::optional<uint64_t> diagnosticsConditionNumber(std::string_view sql);

}  // namespace sp::parser
