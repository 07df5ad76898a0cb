#include "proxy/changes/column_names.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/constants.hpp"

namespace sp::proxy::changes {

namespace {

using protocol::ColumnType;

struct TypeFamily {
  std::string_view data_type;
  std::vector<ColumnType> binlog_types;
};

// DATA_TYPE -> the types a TABLE_MAP may log for it (temporal types in both
// the old and the MySQL 5.6 formats; ENUM, SET and fixed-size binary types
// are logged as STRING with their real type in the metadata).
const std::vector<ColumnType> kStringTypes = {ColumnType::kString, ColumnType::kEnum, ColumnType::kSet,
                                             ColumnType::kVarString};
const std::vector<ColumnType> kBlobTypes = {ColumnType::kBlob, ColumnType::kTinyBlob, ColumnType::kMediumBlob,
                                           ColumnType::kLongBlob, ColumnType::kJson};
const TypeFamily kFamilies[] = {
    {"tinyint", {ColumnType::kTiny}},
    {"smallint", {ColumnType::kShort}},
    {"mediumint", {ColumnType::kInt24}},
    {"int", {ColumnType::kLong}},
    {"bigint", {ColumnType::kLongLong}},
    {"float", {ColumnType::kFloat}},
    {"double", {ColumnType::kDouble}},
    {"decimal", {ColumnType::kNewDecimal, ColumnType::kDecimal}},
    {"date", {ColumnType::kDate, ColumnType::kNewDate}},
    {"datetime", {ColumnType::kDateTime, ColumnType::kDateTime2}},
    {"timestamp", {ColumnType::kTimestamp, ColumnType::kTimestamp2}},
    {"time", {ColumnType::kTime, ColumnType::kTime2}},
    {"year", {ColumnType::kYear}},
    {"bit", {ColumnType::kBit}},
    {"varchar", {ColumnType::kVarchar, ColumnType::kVarString}},
    {"varbinary", {ColumnType::kVarchar, ColumnType::kVarString}},
    {"char", kStringTypes},
    {"binary", kStringTypes},
    {"enum", kStringTypes},
    {"set", kStringTypes},
    {"inet4", kStringTypes},
    {"inet6", kStringTypes},
    {"uuid", kStringTypes},
    {"tinyblob", kBlobTypes},
    {"blob", kBlobTypes},
    {"mediumblob", kBlobTypes},
    {"longblob", kBlobTypes},
    {"tinytext", kBlobTypes},
    {"text", kBlobTypes},
    {"mediumtext", kBlobTypes},
    {"longtext", kBlobTypes},
    {"json", kBlobTypes},
};

std::string hexLiteral(std::string_view text) {
  // A hex literal compares bytewise and needs no quoting of what the binary log says.
  std::string out = "X'";
  for (unsigned char c : text) out += fmt::format("{:02x}", c);
  return out + "'";
}

}  // namespace

bool typeAgrees(std::string_view data_type, uint8_t binlog_type) {
  for (const auto& family : kFamilies) {
    if (family.data_type != data_type) continue;
    return std::any_of(family.binlog_types.begin(), family.binlog_types.end(),
                       [&](ColumnType t) { return static_cast<uint8_t>(t) == binlog_type; });
  }
  return true;
}

bool columnsAgree(const TableColumns& columns, std::span<const uint8_t> binlog_types) {
  if (columns.names.size() != binlog_types.size() || columns.data_types.size() != binlog_types.size()) return false;
  for (size_t i = 0; i < binlog_types.size(); ++i) {
    if (!typeAgrees(columns.data_types[i], binlog_types[i])) return false;
  }
  return true;
}

ColumnsDecision ColumnNameCache::decide(const std::string& schema, const std::string& table,
                                        std::span<const uint8_t> binlog_types, bool just_read) const {
  const TableColumns* cached = find(schema, table);
  if (cached && columnsAgree(*cached, binlog_types)) return ColumnsDecision::kUse;
  return just_read ? ColumnsDecision::kRefuse : ColumnsDecision::kRefresh;
}

const TableColumns* ColumnNameCache::find(const std::string& schema, const std::string& table) const {
  auto it = tables_.find({schema, table});
  return it == tables_.end() ? nullptr : &it->second;
}

void ColumnNameCache::store(const std::string& schema, const std::string& table, TableColumns columns) {
  tables_[{schema, table}] = std::move(columns);
}

std::string columnsQuery(std::string_view schema, std::string_view table) {
  return fmt::format("SELECT COLUMN_NAME, LOWER(DATA_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {} "
                     "AND TABLE_NAME = {} ORDER BY ORDINAL_POSITION",
                     hexLiteral(schema), hexLiteral(table));
}

std::string columnsMismatchMessage(std::string_view backend, std::string_view server, std::string_view schema,
                                   std::string_view table, const TableColumns* columns,
                                   std::span<const uint8_t> binlog_types) {
  const size_t have = columns ? columns->names.size() : 0;
  return fmt::format("the binlog of {} has no column names for {}.{} (binlog_row_metadata=MINIMAL) and "
                     "information_schema.COLUMNS of {} does not fit its row event ({} columns there, {} in the "
                     "event, or their types differ: the table changed since the event was logged); the server "
                     "needs binlog_row_metadata=FULL to stream it",
                     backend, schema, table, server, have, binlog_types.size());
}

}  // namespace sp::proxy::changes
