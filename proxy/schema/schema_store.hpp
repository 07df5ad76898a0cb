// Schema changes in the proxy's SQLite file (config `cache:`, tables
// `schema_changes` and `schema_change_tables` beside the moves): each
// change's statement, state and the state of each of its physical tables,
// saved as each table finishes, so that a change survives a proxy restart
// (SHOW SCHEMA CHANGES lists them; the coordinator resumes the unfinished
// ones at start-up). Used under the coordinator's mutex only.
#pragma once
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/schema/schema_change_record.hpp"

struct sqlite3;

namespace sp::proxy {

class SchemaStore {
 public:
  static std::expected<std::unique_ptr<SchemaStore>, std::string> open(const std::string& path);
  ~SchemaStore();
  SchemaStore(const SchemaStore&) = delete;
  SchemaStore& operator=(const SchemaStore&) = delete;

  // Inserts (id 0: assigns it) or replaces the record and its tables.
  std::expected<void, std::string> save(SchemaChangeRecord& record);
  std::expected<std::vector<SchemaChangeRecord>, std::string> list();

 private:
  explicit SchemaStore(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace sp::proxy
