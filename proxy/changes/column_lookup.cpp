#include "proxy/changes/column_lookup.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "proxy/backend/backend_connection.hpp"

namespace sp::proxy::changes {

ColumnLookup::ColumnLookup(std::string backend, conf::BackendConfig server)
    : backend_(std::move(backend)), server_(std::move(server)) {}

ColumnLookup::~ColumnLookup() {
  if (connection_) connection_->stream().close();
}

awaitable<std::optional<ColumnLookup::Failure>> ColumnLookup::refresh(const std::string& schema,
                                                                      const std::string& table) {
  if (!connection_) {
    auto opened = co_await BackendConnection::open(server_, kNoDatabase, 1 << 20);
    if (!opened) {
      co_return Failure{fmt::format("information_schema.COLUMNS of {}: {}", server_.name, opened.error().message)};
    }
    connection_ = std::move(*opened);
  }
  auto rows = co_await connection_->queryRows(columnsQuery(schema, table));
  if (!rows) {
    connection_.reset();  // reopened at the next refresh
    co_return Failure{fmt::format("information_schema.COLUMNS of {}: {}", server_.name, rows.error().message)};
  }
  TableColumns columns;
  for (const auto& row : *rows) {
    if (row.size() != 2 || !row[0] || !row[1]) continue;
    columns.names.push_back(*row[0]);
    columns.data_types.push_back(*row[1]);
  }
  spdlog::info("change stream: column names of {}.{} read from information_schema of {} ({} columns; the binlog "
               "of {} has none)", schema, table, server_.name, columns.names.size(), backend_);
  cache_.store(schema, table, std::move(columns));
  co_return std::nullopt;
}

awaitable<std::optional<ColumnLookup::Failure>> ColumnLookup::name(protocol::BinlogRowsEvent& rows) {
  bool just_read = false;
  for (;;) {
    switch (cache_.decide(rows.schema, rows.table, rows.column_types, just_read)) {
      case ColumnsDecision::kUse:
        rows.column_names = cache_.find(rows.schema, rows.table)->names;
        co_return std::nullopt;
      case ColumnsDecision::kRefuse:
        co_return Failure{columnsMismatchMessage(backend_, server_.name, rows.schema, rows.table,
                                                 cache_.find(rows.schema, rows.table), rows.column_types),
                          true};
      case ColumnsDecision::kRefresh:
        if (auto failed = co_await refresh(rows.schema, rows.table)) co_return failed;
        just_read = true;
        break;
    }
  }
}

}  // namespace sp::proxy::changes
