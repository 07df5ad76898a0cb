// Which table a name written in a statement means, as the backends resolve
// it: the shard map's tables live in one schema (the backends' database), a
// name qualified with another schema (`other.msg`) or, unqualified, used
// while the session's current database is another one, is a different
// table; with lower_case_table_names = 0 (the Linux default) `MSG` is not
// `msg`. docs/routing.md, "Table names".
#pragma once
#include <string_view>

#include "parser/ast.hpp"

namespace sp::routing {

struct NameScope {
  // The schema holding the sharded tables (backends[].database of the
  // default backend). Empty: schemas are not compared (unit tests, a proxy
  // whose backends log in without a database).
  std::string_view sharded_schema;
  // The session's current database (handshake, USE); empty: none.
  std::string_view current_database;
  // The backends' lower_case_table_names is 0: table and schema names
  // compare byte for byte. Else ASCII case-insensitively (1 and 2).
  bool case_sensitive = false;
};

// True when `written` names the same table or schema as `mapped` under the scope's case rule.
bool sameName(std::string_view written, std::string_view mapped, const NameScope& scope);

// True when `name` (as written) refers to a table of the sharded schema
// whose name is `mapped` (a logical or physical name of the shard map).
bool resolvesTo(const parser::TableName& name, std::string_view mapped, const NameScope& scope);

}  // namespace sp::routing
