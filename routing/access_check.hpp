// What a client user may run (docs/security.md): the statement policy of
// parser/statement_policy.hpp against the user's rights, and the rule that
// physical shard tables (msg_05) are the proxy's business, not the
// application's. Pure: the session turns a denial into an ERR packet.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "parser/lexer.hpp"
#include "parser/statement_policy.hpp"
#include "routing/route_error.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::routing {

// From the user's config (conf::UserAccount).
struct AccessRights {
  bool privileged = false;       // DBA: nothing below is checked
  bool allow_ddl = false;        // parser::Need::kDdl is allowed
  bool physical_tables = false;  // physical shard tables may be named
};

// A privilege the statement needs and the user lacks (the session words it
// as MariaDB would: 1227 / 1142 / 1044 with the user and host), or a refusal
// of the proxy's own (9116 private_table, 9117 unchecked_dynamic_sql).
using AccessDenial = std::variant<parser::PrivilegeNeed, Refusal>;

// The first thing in `sql` that `rights` do not cover; nullopt when the
// statement may run. `map` may be null (no shard map: no physical tables).
// `backslash_escapes`: false under NO_BACKSLASH_ESCAPES.
// `tokens`: tokenize(sql) under the default dialect when the caller has them
// (parser/analysis.hpp), else empty.
std::optional<AccessDenial> checkAccess(std::string_view sql, const AccessRights& rights, const CompiledShardMap* map,
                                        bool backslash_escapes = true, std::span<const parser::Token> tokens = {});

// The first physical shard table `sql` names (identifiers, the literal text
// of PREPARE .. FROM / EXECUTE IMMEDIATE included), with its logical table.
struct PhysicalName {
  std::string physical;
  std::string logical;
};
std::optional<PhysicalName> physicalTableNamed(std::string_view sql, const CompiledShardMap& map);

}  // namespace sp::routing
