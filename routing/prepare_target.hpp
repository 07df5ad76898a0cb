// Where to prepare a statement whose `?` values are not known yet.
// COM_STMT_PREPARE must answer with the parameter count and the column
// metadata of the logical statement; every shard of a table has the same
// schema, so the table's first shard is a faithful representative. The real
// route is decided at each execute, with the bound values (planStatement with
// PlannerInput::params).
#pragma once
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

// SQL-level `PREPARE name FROM '<statement>'`: the statement text is only
// known to the backend, whose EXECUTE ... USING @vars values the proxy never
// sees, so it cannot be routed. Refused (kUnsupported) when the prepared text
// names a sharded table, logical or physical; nullopt otherwise (it then runs
// on the default backend like any unsharded statement).
std::optional<Refusal> checkSqlPrepare(std::string_view sql, const CompiledShardMap& map);

}  // namespace sp::routing
