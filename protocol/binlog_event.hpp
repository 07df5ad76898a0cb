// Binary log events (v4 format, as MariaDB 10.11 writes them and sends them to
// a replica after COM_BINLOG_DUMP): one plain struct per event this proxy
// reads, a decoder per struct, and the CRC32 footer check. Pure: no sockets.
//
// Every event starts with the 19-byte header below; what follows is the
// event's post-header (fixed size per type, sizes listed in the
// FORMAT_DESCRIPTION event) and its body. When the source runs with
// binlog_checksum=CRC32 every event ends with 4 bytes of CRC32 over the rest.
//
// Decoders take the event body without the checksum (splitEvent() checks and
// strips it). Rows events are described in binlog_rows.hpp; the stateful
// decoder turning a stream of raw events into BinlogEvent values is in
// binlog_decoder.hpp.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "protocol/error.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// Event type codes (MariaDB's Log_event_type).
namespace binlog_type {
inline constexpr uint8_t kQuery = 2;
inline constexpr uint8_t kStop = 3;
inline constexpr uint8_t kRotate = 4;
inline constexpr uint8_t kIntvar = 5;
inline constexpr uint8_t kRand = 13;
inline constexpr uint8_t kUserVar = 14;
inline constexpr uint8_t kFormatDescription = 15;
inline constexpr uint8_t kXid = 16;
inline constexpr uint8_t kTableMap = 19;
inline constexpr uint8_t kWriteRowsV1 = 23;
inline constexpr uint8_t kUpdateRowsV1 = 24;
inline constexpr uint8_t kDeleteRowsV1 = 25;
inline constexpr uint8_t kIncident = 26;
inline constexpr uint8_t kHeartbeat = 27;
inline constexpr uint8_t kWriteRowsV2 = 30;
inline constexpr uint8_t kUpdateRowsV2 = 31;
inline constexpr uint8_t kDeleteRowsV2 = 32;
inline constexpr uint8_t kAnnotateRows = 160;
inline constexpr uint8_t kBinlogCheckpoint = 161;
inline constexpr uint8_t kGtid = 162;
inline constexpr uint8_t kGtidList = 163;
inline constexpr uint8_t kStartEncryption = 164;
inline constexpr uint8_t kQueryCompressed = 165;
// 166..171: rows events compressed under log_bin_compress (v1 then v2).
inline constexpr uint8_t kFirstCompressedRows = 166;
inline constexpr uint8_t kLastCompressedRows = 171;
}  // namespace binlog_type

// Header flags.
namespace binlog_flag {
// Made by the server for this stream (fake ROTATE, FORMAT_DESCRIPTION resent
// at the start of a dump): its log_pos is not a position in the file.
inline constexpr uint16_t kArtificial = 0x20;
}  // namespace binlog_flag

inline constexpr size_t kBinlogHeaderSize = 19;
inline constexpr size_t kBinlogChecksumSize = 4;

// A position in the source's binary log: the file and the byte offset where
// the next event starts (an event's log_pos is the end of that event).
struct BinlogPosition {
  std::string file;
  uint64_t pos = 0;
  bool operator==(const BinlogPosition&) const = default;
};
// Orders positions of one server: files by name (MariaDB numbers them with a
// fixed-width suffix, so names compare in creation order), then offsets.
bool binlogBefore(const BinlogPosition& a, const BinlogPosition& b);
std::string toString(const BinlogPosition& p);  // "mariadb-bin.000003:1234"

// Common header: int<4> timestamp, int<1> type, int<4> server_id,
// int<4> event_size (header + post-header + body + checksum),
// int<4> log_pos (end of this event in the file), int<2> flags.
struct BinlogEventHeader {
  uint32_t timestamp = 0;
  uint8_t type = 0;
  uint32_t server_id = 0;
  uint32_t event_size = 0;
  uint32_t log_pos = 0;
  uint16_t flags = 0;
  bool operator==(const BinlogEventHeader&) const = default;
};
DecodeResult<BinlogEventHeader> decodeBinlogEventHeader(ByteView event);

// CRC-32 (IEEE, zlib's crc32) of `data`: the binlog checksum algorithm.
uint32_t binlogCrc32(ByteView data);

// The header and the bytes after it (post-header + body), without the
// checksum. With `has_checksum`, the last 4 bytes are the CRC32 of everything
// before them: a mismatch is kProtocolValue. event_size must equal the
// event's length (kIncomplete when shorter, kExtraBytes when longer).
struct SplitEvent {
  BinlogEventHeader header;
  ByteView data;
};
DecodeResult<SplitEvent> splitEvent(ByteView event, bool has_checksum);

// FORMAT_DESCRIPTION (15): int<2> binlog_version (4), string<50>
// server_version (NUL padded), int<4> create_timestamp, int<1>
// header_length (19), string<n> post-header length of each event type
// (index type-1), int<1> checksum algorithm (0 off, 1 CRC32). This event is
// checksummed whatever the algorithm, so decode it from the whole event.
struct FormatDescriptionEvent {
  uint16_t binlog_version = 0;
  std::string server_version;
  uint32_t create_timestamp = 0;
  uint8_t header_length = 0;
  std::vector<uint8_t> post_header_lengths;
  uint8_t checksum_algorithm = 0;  // 0 off, 1 CRC32
  // Post-header length of `type`, 0 when not listed.
  uint8_t postHeaderLength(uint8_t type) const;
};
DecodeResult<FormatDescriptionEvent> decodeFormatDescription(ByteView whole_event);

// ROTATE (4): int<8> position, string<EOF> next file name.
struct RotateEvent {
  uint64_t position = 0;
  std::string next_file;
};
DecodeResult<RotateEvent> decodeRotate(ByteView data);

// MariaDB GTID (162): int<8> seq_no, int<4> domain_id, int<1> flags2
// [int<8> commit_id when flags2 & FL_GROUP_COMMIT_ID], then extra fields
// this reader skips. Starts an event group (a transaction, or one
// standalone statement when flags2 & FL_STANDALONE).
struct GtidEvent {
  uint64_t seq_no = 0;
  uint32_t domain_id = 0;
  uint8_t flags = 0;
  static constexpr uint8_t kStandalone = 1;
  static constexpr uint8_t kGroupCommitId = 2;
  uint64_t commit_id = 0;
};
DecodeResult<GtidEvent> decodeGtid(ByteView data);

// XID (16): int<8> xid. Commits the transaction of the current group.
struct XidEvent {
  uint64_t xid = 0;
};
DecodeResult<XidEvent> decodeXid(ByteView data);

// QUERY (2): post-header int<4> thread_id, int<4> exec_time, int<1>
// schema_length, int<2> error_code, int<2> status_vars_length; body:
// status_vars, schema, NUL, query text (string<EOF>). Carries BEGIN, COMMIT
// (non-transactional engines), ROLLBACK, and DDL.
struct QueryEvent {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  std::string schema;
  std::string query;
};
DecodeResult<QueryEvent> decodeQuery(ByteView data, uint8_t post_header_length);

// HEARTBEAT (27): sent by an idle dump thread; the header's log_pos is the
// current end of the log, the body the current file name.
struct HeartbeatEvent {
  std::string file;
};
DecodeResult<HeartbeatEvent> decodeHeartbeat(ByteView data);

// ANNOTATE_ROWS (160): the statement text that produced the next rows events.
struct AnnotateRowsEvent {
  std::string query;
};
DecodeResult<AnnotateRowsEvent> decodeAnnotateRows(ByteView data);

}  // namespace sp::protocol
