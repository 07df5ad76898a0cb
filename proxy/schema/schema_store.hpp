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

struct sqlite3;

namespace sp::proxy {

enum class SchemaChangeState : uint8_t { kRunning, kDone, kFailed };
std::string_view toString(SchemaChangeState state);

enum class TableChangeState : uint8_t {
  kPending,
  kDone,     // changed by this change
  kAlready,  // found with the new definition (a run a crash interrupted after the server finished)
  kAbsent,   // an archive or backfill table that does not exist (yet): nothing to change
  kFailed,
};
std::string_view toString(TableChangeState state);

struct TableChange {
  std::string backend;
  std::string table;
  std::string role;          // shard, archive, backfill
  TableChangeState state = TableChangeState::kPending;
  std::string algorithm;     // the one the server took
  double seconds = 0;
  std::string error;
};

struct SchemaChangeRecord {
  int64_t id = 0;
  std::string table;         // logical
  std::string kind;          // ALTER TABLE, CREATE INDEX, ...
  std::string statement;     // as the client wrote it
  SchemaChangeState state = SchemaChangeState::kRunning;
  std::string message;       // the first table's error, or a note
  // Each role's table definition before the change ("role\tshape\n"...):
  // a pending table found different from it was already changed.
  std::string shapes_before;
  std::string created_by, created_at, updated_at;
  std::vector<TableChange> tables;
};

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
