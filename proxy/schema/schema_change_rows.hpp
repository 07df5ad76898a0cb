// The rows SHOW SCHEMA CHANGES and SHOW SCHEMA CHANGE <id> answer
// (docs/admin.md, "Schema changes"), for this proxy's changes and, in a
// fleet, the other proxies'.
#pragma once
#include <string>
#include <vector>

#include "proxy/net/local_result.hpp"
#include "proxy/schema/schema_change_record.hpp"

namespace sp::proxy {

struct TableCounts {
  size_t changed = 0, absent = 0, failed = 0, pending = 0;
  double seconds = 0;  // of ALTER, summed over the tables
};
TableCounts countsOf(const SchemaChangeRecord& record);

struct ChangeRow {
  const SchemaChangeRecord* record = nullptr;
  std::string proxy;       // in a fleet: whose change
  std::string claimed;     // in a fleet: "yes" while its proxy holds the table's claim, else "no"
  std::string adopted_by;  // in a fleet: "<proxy>/<id>" that took it over
};
LocalResult changesResult(const std::vector<ChangeRow>& rows);
LocalResult tablesResult(const SchemaChangeRecord& record);

}  // namespace sp::proxy
