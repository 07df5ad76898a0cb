// Schema changes across a fleet (issue 31, docs/admin.md "Schema changes in a
// fleet"), as kept in etcd under the fleet's prefix, JSON values:
//   schema/claim/<table>           the change of a logical table running now
//                                  (SchemaClaimRecord), under its proxy's
//                                  lease: created only when absent, so one
//                                  proxy of the fleet changes a table at a
//                                  time; gone when the change stops or its
//                                  proxy dies
//   schema/changes/<proxy>/<id>    each change with the state of every
//                                  physical table (SchemaChangeFleetRecord),
//                                  put by its proxy after each table, no
//                                  lease: it outlives the proxy, so another
//                                  one can list it and adopt it
//   schema/adopted/<proxy>/<id>    "<proxy>/<id>": the change of its own
//                                  that another proxy made of that one (put
//                                  by the adopter only, so the owner's own
//                                  puts never undo it)
// "schema/" sorts after "map": outside the range the fleet agent watches.
// Pure: keys, encoding and decoding only.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coord {

struct SchemaClaimRecord {
  std::string proxy;
  int64_t change_id = 0;  // the proxy's own id of the change (0: claimed before it was recorded)
  std::string statement;
  std::string who;
};

struct SchemaTableFleetRecord {
  std::string backend, table, role, state, algorithm, error;
  double seconds = 0;
};

struct SchemaChangeFleetRecord {
  std::string proxy;
  int64_t id = 0;
  std::string table, kind, statement, state, message, shapes_before;
  std::string created_by, created_at, updated_at;
  std::vector<SchemaTableFleetRecord> tables;
};

std::string schemaPrefix(std::string_view prefix);  // "<prefix>/schema/"
std::string schemaClaimPrefix(std::string_view prefix);
std::string schemaClaimKey(std::string_view prefix, std::string_view table);
std::string schemaChangesPrefix(std::string_view prefix);
std::string schemaChangeKey(std::string_view prefix, std::string_view proxy, int64_t id);
std::string schemaAdoptedPrefix(std::string_view prefix);
std::string schemaAdoptedKey(std::string_view prefix, std::string_view proxy, int64_t id);

std::string encodeSchemaClaim(const SchemaClaimRecord& record);
std::expected<SchemaClaimRecord, std::string> decodeSchemaClaim(std::string_view json);
std::string encodeSchemaChange(const SchemaChangeFleetRecord& record);
// Errors name what is wrong; a record without proxy, id or table is one.
std::expected<SchemaChangeFleetRecord, std::string> decodeSchemaChange(std::string_view json);

}  // namespace sp::coord
