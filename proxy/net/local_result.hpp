// Result sets the proxy answers by itself (EXPLAIN SHARDS, admin commands):
// VARCHAR columns of text values, encoded with protocol/ in the EOF style the
// client negotiated.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "protocol/resultset.hpp"
#include "protocol/wire.hpp"

namespace sp::proxy {

struct LocalResult {
  std::vector<std::string> columns;
  // Column definitions when not the default VARCHAR ones (one per column; names from `columns`).
  std::vector<protocol::ColumnDefinition41> definitions;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// Appends the whole result set as framed packets starting at `seq`; returns
// the next seq. `binary_rows`: the rows of a COM_STMT_EXECUTE answer (each
// value converted from its text per its column definition).
// `mariadb_capabilities`: the client's (extended type info adds a field to
// every column definition).
// Column definitions as MariaDB sends them for its own results: a utf8mb4
// text column of `length` characters (NOT NULL unless `nullable`), and a
// binary number column (UNSIGNED BINARY plus `flags`).
protocol::ColumnDefinition41 localTextColumn(uint32_t length, bool nullable = false);
protocol::ColumnDefinition41 localNumberColumn(protocol::ColumnType type, uint32_t length, uint16_t flags);

uint8_t appendLocalResult(protocol::Bytes& out, const LocalResult& result, uint32_t client_capabilities,
                          uint16_t status_flags, uint8_t seq, bool binary_rows = false,
                          uint32_t mariadb_capabilities = 0);

// The COM_STMT_PREPARE answer for a statement the proxy answers itself
// (prepared_diagnostics.cpp): the prepare OK (no parameters) with `result`'s
// columns, their definitions and, unless the client negotiated
// DEPRECATE_EOF, an EOF. Returns the next seq.
uint8_t appendLocalPrepareOk(protocol::Bytes& out, const LocalResult& result, uint32_t statement_id,
                             uint32_t client_capabilities, uint16_t status_flags, uint8_t seq,
                             uint32_t mariadb_capabilities = 0);

}  // namespace sp::proxy
