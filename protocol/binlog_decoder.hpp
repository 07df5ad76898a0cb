// Turns the raw events of a binlog stream (what follows the 0x00 byte of each
// packet after COM_BINLOG_DUMP) into BinlogEvent values. Stateful: it keeps
// the current file name (ROTATE), the checksum setting (FORMAT_DESCRIPTION)
// and the TABLE_MAPs by table id that rows events refer to. Pure: no I/O.
#pragma once
#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "protocol/binlog_event.hpp"
#include "protocol/binlog_rows.hpp"

namespace sp::protocol {

// Changed rows of one table from one rows event.
struct BinlogRowsEvent {
  enum class Kind : uint8_t { kInsert, kUpdate, kDelete };
  Kind kind = Kind::kInsert;
  std::string schema, table;
  std::vector<std::string> column_names;  // empty when the source logs MINIMAL metadata
  std::vector<uint8_t> column_types;      // ColumnType values, from the TABLE_MAP (always logged)
  std::vector<uint32_t> primary_key;      // column indexes, from the TABLE_MAP when logged
  // Every image holds every column (binlog_row_image=FULL); otherwise absent
  // columns read as NULL and the images are not whole rows.
  bool full_images = true;
  // Updates: rows[2k] = before image, rows[2k+1] = after image.
  std::vector<std::vector<BinlogValue>> rows;
};
// End of a transaction: XID (InnoDB) or a QUERY "COMMIT" (other engines).
struct BinlogCommitEvent {
  uint64_t xid = 0;  // 0 for a QUERY COMMIT
};
// Any other QUERY event: BEGIN, ROLLBACK, DDL.
struct BinlogQueryEvent {
  std::string schema;
  std::string query;
};
struct BinlogGtidEvent {
  GtidEvent gtid;
};
struct BinlogRotateEvent {
  RotateEvent rotate;
};
struct BinlogHeartbeatEvent {};
// Events this reader does not act on (FORMAT_DESCRIPTION, TABLE_MAP,
// ANNOTATE_ROWS, GTID_LIST, BINLOG_CHECKPOINT, INTVAR, ...): skipped by type.
struct BinlogOtherEvent {
  uint8_t type = 0;
};

struct BinlogEvent {
  BinlogEventHeader header;
  // Where the next event starts: the file and log_pos of this event (for a
  // ROTATE the new file and its position; for artificial events the
  // position before them).
  BinlogPosition end;
  std::variant<BinlogRowsEvent, BinlogCommitEvent, BinlogQueryEvent, BinlogGtidEvent, BinlogRotateEvent,
               BinlogHeartbeatEvent, BinlogOtherEvent>
      body;
};

// A decode failure with the human message (which event, which field).
struct BinlogError {
  DecodeError code = DecodeError::kProtocolValue;
  std::string message;
};
template <class T>
using BinlogResult = std::expected<T, BinlogError>;

class BinlogDecoder {
 public:
  // `start`: the position the dump was asked for (the file until a ROTATE
  // says otherwise). `checksum`: whether events carry a CRC32 footer (the
  // replica announced @master_binlog_checksum; FORMAT_DESCRIPTION confirms).
  BinlogDecoder(BinlogPosition start, bool checksum) : position_(std::move(start)), checksum_(checksum) {}

  // One event (without the packet's leading 0x00). Refused (kProtocolValue):
  // compressed rows or query events, encrypted binlogs, rows events for a
  // table id without TABLE_MAP, bad checksums.
  BinlogResult<BinlogEvent> decode(ByteView event);

  const BinlogPosition& position() const { return position_; }
  bool checksum() const { return checksum_; }

 private:
  BinlogResult<BinlogRowsEvent> rows(const SplitEvent& split);

  BinlogPosition position_;
  bool checksum_;
  FormatDescriptionEvent format_;
  bool have_format_ = false;
  std::map<uint64_t, TableMapEvent> tables_;
};

}  // namespace sp::protocol
