// Schema drift (docs/admin.md, SHOW SCHEMA DRIFT): every physical table of a
// logical table must have the same columns and indexes, on every backend,
// or statements routed to different shards mean different things and a
// scatter merge would put one shard's column under another's name. Pure:
// the proxy reads information_schema on each backend (kDriftColumnsQuery,
// kDriftIndexesQuery) and this compares.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/map/shard_map.hpp"

namespace sp::routing {

// Rows: TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLLATION_NAME.
inline constexpr std::string_view kDriftColumnsQuery =
    "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLLATION_NAME "
    "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION";
// Rows: TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART.
inline constexpr std::string_view kDriftIndexesQuery =
    "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART "
    "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX";

using TextRows = std::vector<std::vector<std::optional<std::string>>>;

// One physical table as a backend describes it.
struct TableShape {
  std::vector<std::pair<std::string, std::string>> columns;  // name -> "type NULL|NOT NULL DEFAULT x extra collation", in order
  std::map<std::string, std::string> indexes;                // name -> "UNIQUE (a,b(10))"
};

// Tables of one backend's schema, from the two queries' rows.
using BackendShapes = std::map<std::string, TableShape>;
BackendShapes shapesFromRows(const TextRows& columns, const TextRows& indexes);

struct DriftRow {
  std::string table;           // logical
  std::string physical_table;
  std::string backend;
  std::string difference;      // "missing", "column x: int(11) NOT NULL vs bigint(20) NOT NULL", ...
  std::string reference;       // the physical table it is compared with (`backend`.`table`)
};

// Every physical table of every logical table of `map`, compared with the
// table's first physical table (its first shard). `shapes`: by backend name;
// a backend missing from it could not be read (`unreadable`) and is reported
// as such.
std::vector<DriftRow> findSchemaDrift(const CompiledShardMap& map, const std::map<std::string, BackendShapes>& shapes,
                                      const std::map<std::string, std::string>& unreadable = {});

}  // namespace sp::routing
