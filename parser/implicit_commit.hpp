// Statements before which MariaDB commits the open transaction (its
// "statements that cause an implicit commit"). Inside an XA branch the server
// refuses them instead (1399, XAER_RMFAIL), so a transaction the proxy keeps
// as a global (XA) transaction commits itself first, as one server would
// (docs/routing.md, "Implicit commits").
#pragma once

#include <string_view>

#include "parser/classify.hpp"
#include "parser/dialect.hpp"

namespace sp::parser {

// `kind` is classify()'s for `sql`. Not counted: temporary tables (no commit
// on the server), UNLOCK TABLES (no table can be locked in such a
// transaction), XA statements (the client's own: the server answers them).
bool causesImplicitCommit(std::string_view sql, StatementKind kind, const Dialect& dialect = {});

}  // namespace sp::parser
