// Statements before which MariaDB commits the open transaction (its
// "statements that cause an implicit commit"). Inside an XA branch the server
// refuses them instead (1399, XAER_RMFAIL), so a transaction the proxy keeps
// as a global (XA) transaction commits itself first, as one server would
// (docs/routing.md, "Implicit commits").
#pragma once

#include <cstdint>
#include <string_view>

#include "parser/classify.hpp"
#include "parser/dialect.hpp"

namespace sp::parser {

// `kind` is classify()'s for `sql`. Not counted: temporary tables (no commit
// on the server), UNLOCK TABLES (no table can be locked in such a
// transaction), XA statements (the client's own: the server answers them).
bool causesImplicitCommit(std::string_view sql, StatementKind kind, const Dialect& dialect = {});

// What a SET statement does to autocommit. On one server, turning it on
// while it is off commits the open transaction (checked on 10.11: `SET
// autocommit = 0; BEGIN; ...; SET autocommit = 1` leaves @@in_transaction
// 0); setting it to what it already is commits nothing.
enum class AutocommitChange : uint8_t {
  kNone,     // not assigned
  kOn,       // 1, ON, TRUE, 'ON' (any case): the last assignment wins
  kOff,      // 0, OFF, FALSE, 'OFF'
  kUnknown,  // an expression, a variable, DEFAULT, ?: its value is the server's
};
// `info` is classify()'s (kSet; anything else is kNone).
AutocommitChange autocommitChange(const StatementInfo& info);

}  // namespace sp::parser
