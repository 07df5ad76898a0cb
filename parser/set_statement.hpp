// SET STATEMENT var = value [, ...] FOR statement (MariaDB): the variables
// hold for that one statement only. The server parses the whole text under
// the session's current sql_mode and charset (a new sql_mode applies to the
// statement's execution, not to how it is read: verified on 10.11), so the
// statement after FOR is read with the session's Dialect.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "parser/dialect.hpp"

namespace sp::parser {

// Offset of the statement after FOR (its first significant byte) when `sql`
// is a SET STATEMENT ... FOR statement; nullopt otherwise (also when FOR is
// missing: the server rejects that).
std::optional<uint32_t> setStatementBody(std::string_view sql, const Dialect& dialect = {});

}  // namespace sp::parser
