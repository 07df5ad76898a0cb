#include "routing/name_scope.hpp"

#include <algorithm>

namespace sp::routing {

namespace {
char lowerNameChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

bool sameName(std::string_view written, std::string_view mapped, const NameScope& scope) {
  if (scope.case_sensitive) return written == mapped;
  return written.size() == mapped.size() &&
         std::equal(written.begin(), written.end(), mapped.begin(), [](char a, char b) { return lowerNameChar(a) == lowerNameChar(b); });
}

bool resolvesTo(const parser::TableName& name, std::string_view mapped, const NameScope& scope) {
  if (!sameName(name.table.value, mapped, scope)) return false;
  if (scope.sharded_schema.empty()) return true;
  // Unqualified: the session's current database, as on the server (none: the
  // server answers "No database selected", which passing it on keeps).
  const std::string_view schema = name.db.empty() ? scope.current_database : name.db.value;
  return sameName(schema, scope.sharded_schema, scope);
}

}  // namespace sp::routing
