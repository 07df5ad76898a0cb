// Column names of a streamed table when the binary log does not carry them
// (binlog_row_metadata=MINIMAL): read from information_schema.COLUMNS of the
// server the reader reads, cached per physical table, and checked against
// every TABLE_MAP's column types (which every row event carries whatever the
// metadata setting), so that a schema change (ALTER TABLE ... ADD/DROP
// COLUMN, a type change) refreshes the cache and names are never put on the
// wrong values. Pure: the reader (change_reader.cpp) does the query.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::proxy::changes {

// One table's columns in ordinal order, as information_schema.COLUMNS gives
// them (COLUMN_NAME, DATA_TYPE).
struct TableColumns {
  std::vector<std::string> names;
  std::vector<std::string> data_types;  // lower case: "bigint", "varbinary", ...
};

// Whether a binlog column type (protocol::ColumnType) can be the column of
// that DATA_TYPE. A DATA_TYPE this table does not know (a plugin type) agrees
// with any binlog type: only the count then checks it.
bool typeAgrees(std::string_view data_type, uint8_t binlog_type);

// Whether `columns` describe a TABLE_MAP with these column types: same count,
// every type agreeing.
bool columnsAgree(const TableColumns& columns, std::span<const uint8_t> binlog_types);

enum class ColumnsDecision : uint8_t {
  kUse,      // the cached names describe the event
  kRefresh,  // none cached, or they disagree: read information_schema again
  kRefuse,   // just read, and they still disagree: the event is older or newer than the schema
};

class ColumnNameCache {
 public:
  // `just_read`: the entry was (re)read from the server for this event.
  ColumnsDecision decide(const std::string& schema, const std::string& table, std::span<const uint8_t> binlog_types,
                         bool just_read) const;
  const TableColumns* find(const std::string& schema, const std::string& table) const;
  void store(const std::string& schema, const std::string& table, TableColumns columns);

 private:
  std::map<std::pair<std::string, std::string>, TableColumns> tables_;
};

// The query that reads one table's columns (COLUMN_NAME, DATA_TYPE in
// ordinal order); `schema` and `table` come from the binary log and are
// quoted here.
std::string columnsQuery(std::string_view schema, std::string_view table);

// Why a row event is refused: the names read do not fit its TABLE_MAP.
std::string columnsMismatchMessage(std::string_view backend, std::string_view server, std::string_view schema,
                                   std::string_view table, const TableColumns* columns,
                                   std::span<const uint8_t> binlog_types);

}  // namespace sp::proxy::changes
