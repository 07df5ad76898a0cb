// Per-user schema and table allow lists (users[].allow_schemas,
// users[].allow_tables; docs/security.md): which schemas and tables a user's
// statements may name. Pure: the session turns a denial into MariaDB's own
// 1044 (schema) or 1142 (table) error.
//
// Patterns: `*` matches any run of characters, everything else itself, ASCII
// case-insensitively. A table pattern is `table` (in any schema the user may
// use) or `schema.table`. `information_schema` is always allowed (it shows
// only what the proxy's catalog lets through). A physical shard table counts
// as its logical table (for users allowed to name physical tables).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::routing {

struct AllowLists {
  const std::vector<std::string>* schemas = nullptr;  // nullptr: every schema
  const std::vector<std::string>* tables = nullptr;   // nullptr: every table
  bool restricts() const { return schemas || tables; }
};

// What a statement names that the lists leave out.
struct AllowDenial {
  // 1044: a schema named alone (USE, SHOW TABLES FROM) is not allowed; else
  // 1142 on `database`.`table` (also for a table of a schema not allowed).
  bool schema = false;
  std::string command;   // 1142's command word as MariaDB names it: SELECT, INSERT, UPDATE, DELETE, CREATE, ...
  std::string database;
  std::string table;
};

bool globMatches(std::string_view pattern, std::string_view text);
// SQL LIKE (`%`, `_`, `\` escapes), ASCII case-insensitive as the server's
// default collations compare table names (the catalog's SHOW ... LIKE).
bool likeMatches(std::string_view pattern, std::string_view text);
bool schemaAllowed(const AllowLists& lists, std::string_view schema);
bool tableAllowed(const AllowLists& lists, std::string_view schema, std::string_view table,
                  const CompiledShardMap* map);

// The first schema or table `sql` names (parser::tableReferences) outside the
// lists; unqualified tables are in `session_database`.
std::optional<AllowDenial> checkAllowLists(std::string_view sql, const AllowLists& lists,
                                           std::string_view session_database, const CompiledShardMap* map,
                                           const parser::Dialect& dialect = {});

}  // namespace sp::routing
