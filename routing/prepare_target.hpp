// Where to prepare a statement whose `?` values are not known yet.
// COM_STMT_PREPARE must answer with the parameter count and the column
// metadata of the logical statement; every shard of a table has the same
// schema, so the table's first shard is a faithful representative. The real
// route is decided at each execute, with the bound values (planStatement with
// PlannerInput::params).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "routing/plan.hpp"

namespace sp::routing {

// kPassthrough when the statement names no sharded table; kRoute to the first
// shard of the (single) sharded table it names, logical names rewritten;
// kRefused when it cannot be prepared safely (does not parse, names two
// sharded tables, names directly tables on different backends).
// `preferred_backend`: a session inside a transaction prepares on its
// transaction's backend when a shard of the table lives there (the first such
// shard is the representative then).
Plan planForPrepare(std::string_view sql, const PlannerInput& input, std::string_view preferred_backend = {});

// SQL-level `PREPARE name FROM '<statement>'`: routed like the statement it
// prepares when that names one shard by a literal key (kRoute: the PREPARE
// with its text rewritten to the physical table, run on that shard's backend,
// where the session's EXECUTEs then run, the connection kept); kPassthrough
// when the text names no sharded table (or is `FROM @var`, known only to the
// backend); refused when it needs a key bound by EXECUTE ... USING @var
// (values the proxy never sees) or spans shards.
Plan planSqlPrepare(std::string_view sql, const PlannerInput& input);

// The statement text of `PREPARE name FROM '<statement>'`, unquoted; nullopt
// for `FROM @var` (known only to the backend) or no FROM literal.
std::optional<std::string> sqlPrepareText(std::string_view sql, const parser::Dialect& dialect);
// PREPARE name FROM @variable: the variable as written ("@q", "@`q`"), to
// read its value; nullopt for the literal form or anything else.
std::optional<std::string> sqlPrepareVariable(std::string_view sql, const parser::Dialect& dialect);

}  // namespace sp::routing
