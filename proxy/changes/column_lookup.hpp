// The reader's side of column_names.hpp: gives a streamed table's row event
// its column names when the binary log has none (binlog_row_metadata=MINIMAL),
// reading information_schema.COLUMNS of the server the reader reads (with the
// backend's application account: the replication account sees no columns)
// over a connection of its own, opened when first needed.
#pragma once
#include <memory>
#include <string>

#include "conf/backend_config.hpp"
#include "protocol/binlog_decoder.hpp"
#include "proxy/changes/column_names.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {
class BackendConnection;
}

namespace sp::proxy::changes {

class ColumnLookup {
 public:
  ColumnLookup(std::string backend, conf::BackendConfig server);
  ~ColumnLookup();

  struct Failure {
    std::string message;
    bool fatal = false;  // the names do not fit the event (not a lost connection)
  };
  // Sets rows.column_names from the cache, refreshed when the event's column
  // types disagree with it. (An lvalue: GCC 12 destroys coroutine temporaries twice.)
  awaitable<std::optional<Failure>> name(protocol::BinlogRowsEvent& rows);

 private:
  awaitable<std::optional<Failure>> refresh(const std::string& schema, const std::string& table);

  std::string backend_;
  conf::BackendConfig server_;
  ColumnNameCache cache_;
  std::unique_ptr<BackendConnection> connection_;
};

}  // namespace sp::proxy::changes
