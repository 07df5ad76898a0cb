// The logical catalog (docs/routing.md, "The logical catalog"): what SHOW
// TABLES, SHOW CREATE TABLE, DESCRIBE, SHOW COLUMNS / INDEX and queries on
// information_schema.TABLES / COLUMNS / STATISTICS answer for application
// users. The statement runs on the backends as written (with a logical
// table's name pointed at one of its physical tables), and the rows that
// come back are rewritten: physical names become logical ones, each logical
// table is shown from one physical table only, the other physical tables
// are hidden. Column definitions stay the server's. Pure: the session runs
// the parts (proxy/session/catalog_executor.cpp).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"
#include "protocol/resultset.hpp"
#include "routing/allow_list.hpp"
#include "routing/map/shard_map.hpp"

namespace sp::routing {

// One statement to run on one backend; parts run in order.
struct CatalogPart {
  std::string backend;
  std::string sql;
  bool primary = false;  // rows of unsharded tables are taken from this part only (the default backend)
};

struct CatalogPlan {
  std::vector<CatalogPart> parts;
  // SHOW TABLES / TABLE STATUS LIKE 'p': the pattern as written, which a
  // renamed row's logical name must match too (`LIKE 'msg_0%'` finds
  // msg_00 on the backend, but not `msg`).
  std::optional<std::string> like;
};

// The plan for a catalog statement; nullopt when `sql` is not one (it then
// runs as any other statement). `default_backend` holds the unsharded tables.
// `session_database`: the session's default database; when it is
// information_schema, `FROM TABLES` names information_schema.TABLES.
std::optional<CatalogPlan> planCatalog(std::string_view sql, const CompiledShardMap& map,
                                       std::string_view default_backend, const parser::Dialect& dialect = {},
                                       std::string_view session_database = {});

// Whether `database` is information_schema as the server matches its name.
bool isInformationSchemaDatabase(std::string_view database);

// Rewrites the rows of a catalog plan's parts, one part after the other.
class CatalogRowFilter {
 public:
  CatalogRowFilter(const CompiledShardMap& map, AllowLists lists, std::string session_schema,
                   std::optional<std::string> like = std::nullopt);

  // The result's columns (the same for every part): which hold table names,
  // schema names, DDL.
  void setColumns(const std::vector<protocol::ColumnDefinition41>& columns);
  // Rewrites `row` in place; false when it is to be left out.
  bool accept(std::vector<std::optional<std::string>>& row, bool primary_part);

 private:
  const CompiledShardMap& map_;
  AllowLists lists_;
  std::string session_schema_;
  std::optional<std::string> like_;
  std::vector<size_t> name_columns_;  // the first is the row's own table
  std::optional<size_t> schema_column_;
  std::optional<size_t> ddl_column_;
  // Logical table -> the physical table its rows are shown from.
  std::map<std::string, std::string> shown_from_;
};

// `CREATE TABLE `msg_00` (...) ... AUTO_INCREMENT=5 ...` as the logical table's
// DDL: the name replaced, the shard's own AUTO_INCREMENT counter left out.
std::string logicalCreateTable(std::string_view ddl, std::string_view physical, std::string_view logical);

}  // namespace sp::routing
