// One physical table's part of a schema change: connect to its backend's
// primary, look at the table's definition, run the statement with the first
// algorithm the server takes (INSTANT, then INPLACE with LOCK=NONE, or as
// written), bounded by lock_wait_timeout so that a long transaction holding
// the table makes the change fail instead of queueing every statement of
// the table behind it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "conf/backend_config.hpp"
#include "proxy/net/net.hpp"
#include "proxy/schema/schema_store.hpp"
#include "routing/schema_change.hpp"

namespace sp::proxy {

struct TableRunInput {
  const routing::LogicalDdl* ddl = nullptr;
  conf::BackendConfig server;   // the backend's primary now
  size_t max_packet_bytes = 0;
  std::string table;
  std::string role;
  uint32_t lock_wait_timeout_s = 10;
  // Resuming an interrupted change: a table whose definition is the changed
  // one (`shape_after`, from a table already done) or no longer the one
  // before the change (`shape_before`) was changed by the interrupted run.
  bool resuming = false;
  std::string shape_before;
  std::string shape_after;
};

struct TableRunResult {
  TableChangeState state = TableChangeState::kFailed;
  std::string algorithm;
  double seconds = 0;
  std::string error;
  bool algorithm_refused = false;  // the server cannot make it INSTANT or INPLACE without locking
  std::string shape;               // the table's definition after the run (empty: none / unreadable)
};

awaitable<TableRunResult> runTableChange(const TableRunInput& input);

// A table's definition as text (columns and indexes, drift-check form);
// empty when the table does not exist. The error when it cannot be read.
awaitable<std::expected<std::string, std::string>> readTableShape(const conf::BackendConfig& server,
                                                                  size_t max_packet_bytes, const std::string& table);

}  // namespace sp::proxy
