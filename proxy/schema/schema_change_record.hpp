// A schema change of a logical table and the state of each of its physical
// tables (docs/admin.md, "Schema changes"): what the SQLite store saves, the
// fleet's record (coord/schema_records.hpp) copies and SHOW SCHEMA CHANGES lists.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::proxy {

enum class SchemaChangeState : uint8_t {
  kRunning,
  kDone,
  kFailed,
  kAdopted,  // another proxy of the fleet took it over (RETRY SCHEMA CHANGE n FROM PROXY p) and runs it
};
std::string_view toString(SchemaChangeState state);
std::optional<SchemaChangeState> schemaChangeStateNamed(std::string_view name);

enum class TableChangeState : uint8_t {
  kPending,
  kDone,     // changed by this change
  kAlready,  // found with the new definition (a run a crash interrupted after the server finished)
  kAbsent,   // an archive or backfill table that does not exist (yet): nothing to change
  kFailed,
};
std::string_view toString(TableChangeState state);
std::optional<TableChangeState> tableChangeStateNamed(std::string_view name);

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

}  // namespace sp::proxy
