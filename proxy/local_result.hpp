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

// Appends the whole result set as framed packets starting at `seq`; returns the next seq.
uint8_t appendLocalResult(protocol::Bytes& out, const LocalResult& result, uint32_t client_capabilities,
                          uint16_t status_flags, uint8_t seq);

}  // namespace sp::proxy
