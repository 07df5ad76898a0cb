// Turns one backend's decoded binlog events into its committed
// transactions, as changes of logical tables: the rows of the streamed
// physical tables (change_tables.hpp) in the backend's database, grouped by
// transaction (GTID .. XID / COMMIT), handed out only when the transaction
// has committed. Rows events carrying MariaDB's LOG_EVENT_SKIP_REPLICATION_F
// (0x8000: written by a session with skip_replication=1, as the proxy's
// maintenance sessions are: a move's copy, catch-up and cleanup, archiving)
// are not changes and are dropped. A cut-over mark (proxy/core/cutover_mark.hpp)
// becomes the transaction's wait_for. Pure: no I/O.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "protocol/binlog_decoder.hpp"
#include "proxy/changes/change_position.hpp"
#include "proxy/changes/change_tables.hpp"

namespace sp::proxy::changes {

inline constexpr uint16_t kSkipReplicationFlag = 0x8000;

struct ChangeRow {
  enum class Op : uint8_t { kInsert, kUpdate, kDelete };
  Op op = Op::kInsert;
  const LogicalTable* table = nullptr;  // owned by the ChangeTables of the assembler
  size_t key_index = 0;                 // the key column's index in columns
  std::shared_ptr<const std::vector<std::string>> columns;
  std::vector<protocol::BinlogValue> before, after;  // empty when the op has none
};

// Waits for the source's GTID of a cut-over (proxy/core/cutover_mark.hpp).
struct WaitFor {
  std::string backend;
  StreamGtid gtid;
};

struct ChangeTransaction {
  std::string backend;
  std::optional<StreamGtid> gtid;  // absent for an event group without GTID (none on MariaDB 10+)
  uint32_t timestamp = 0;          // commit time (unix seconds, the server's clock)
  std::vector<ChangeRow> rows;     // empty: a transaction of other tables, or maintenance only
  std::optional<WaitFor> wait_for;
  uint32_t skipped_rows = 0;       // maintenance row changes dropped
};

// Whether a transaction waiting at a cut-over mark may go: the stream has
// passed the source's GTID on the source backend (a backend the stream does
// not read never holds it up).
bool waitIsOver(const WaitFor& wait, const ChangePosition& emitted);

class ChangeAssembler {
 public:
  // `schema`: the backend's database; rows of other schemas are ignored.
  // `max_rows`: a transaction with more changes of streamed tables is an error.
  ChangeAssembler(std::string backend, std::string schema, const ChangeTables& tables, size_t max_rows)
      : backend_(std::move(backend)), schema_(std::move(schema)), tables_(tables), max_rows_(max_rows) {}

  // One event; a transaction when this event committed one.
  std::expected<std::optional<ChangeTransaction>, std::string> feed(const protocol::BinlogEvent& event);

 private:
  std::expected<void, std::string> rows(const protocol::BinlogEvent& event, const protocol::BinlogRowsEvent& rows);
  std::optional<ChangeTransaction> finish(uint32_t timestamp);

  std::string backend_;
  std::string schema_;
  const ChangeTables& tables_;
  size_t max_rows_;
  bool open_ = false;  // inside an event group
  bool standalone_ = false;
  ChangeTransaction current_;
  std::shared_ptr<const std::vector<std::string>> last_columns_;  // shared by the rows of one table map
};

}  // namespace sp::proxy::changes
