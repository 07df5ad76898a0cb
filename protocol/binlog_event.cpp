#include "protocol/binlog_event.hpp"

#include <array>

#include "protocol/detail_try.hpp"

namespace sp::protocol {

bool binlogBefore(const BinlogPosition& a, const BinlogPosition& b) {
  if (a.file != b.file) {
    // Same base name, fixed-width numeric suffix: longer means later (a
    // suffix past 999999 grows), otherwise byte order is creation order.
    if (a.file.size() != b.file.size()) return a.file.size() < b.file.size();
    return a.file < b.file;
  }
  return a.pos < b.pos;
}

std::string toString(const BinlogPosition& p) { return p.file + ":" + std::to_string(p.pos); }

DecodeResult<BinlogEventHeader> decodeBinlogEventHeader(ByteView event) {
  Reader r(event);
  BinlogEventHeader h;
  SP_TRY(timestamp, r.u32());
  SP_TRY(type, r.u8());
  SP_TRY(server_id, r.u32());
  SP_TRY(event_size, r.u32());
  SP_TRY(log_pos, r.u32());
  SP_TRY(flags, r.u16());
  h.timestamp = timestamp;
  h.type = type;
  h.server_id = server_id;
  h.event_size = event_size;
  h.log_pos = log_pos;
  h.flags = flags;
  return h;
}

namespace {

constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr auto kCrcTable = makeCrcTable();

}  // namespace

uint32_t binlogCrc32(ByteView data) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : data) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

DecodeResult<SplitEvent> splitEvent(ByteView event, bool has_checksum) {
  SP_TRY(header, decodeBinlogEventHeader(event));
  if (header.event_size > event.size()) return std::unexpected(DecodeError::kIncomplete);
  if (header.event_size < event.size()) return std::unexpected(DecodeError::kExtraBytes);
  size_t end = event.size();
  if (has_checksum) {
    if (end < kBinlogHeaderSize + kBinlogChecksumSize) return std::unexpected(DecodeError::kIncomplete);
    end -= kBinlogChecksumSize;
    Reader footer(event.subspan(end));
    SP_TRY(stored, footer.u32());
    if (stored != binlogCrc32(event.first(end))) return std::unexpected(DecodeError::kProtocolValue);
  }
  return SplitEvent{header, event.subspan(kBinlogHeaderSize, end - kBinlogHeaderSize)};
}

uint8_t FormatDescriptionEvent::postHeaderLength(uint8_t type) const {
  if (type == 0 || type > post_header_lengths.size()) return 0;
  return post_header_lengths[type - 1];
}

DecodeResult<FormatDescriptionEvent> decodeFormatDescription(ByteView whole_event) {
  SP_TRY(header, decodeBinlogEventHeader(whole_event));
  if (header.type != binlog_type::kFormatDescription) return std::unexpected(DecodeError::kProtocolValue);
  if (header.event_size != whole_event.size()) {
    return std::unexpected(header.event_size > whole_event.size() ? DecodeError::kIncomplete
                                                                  : DecodeError::kExtraBytes);
  }
  Reader r(whole_event.subspan(kBinlogHeaderSize));
  FormatDescriptionEvent f;
  SP_TRY(version, r.u16());
  SP_TRY(server_version, r.fixed(50));
  SP_TRY(created, r.u32());
  SP_TRY(header_length, r.u8());
  if (version != 4 || header_length != kBinlogHeaderSize) return std::unexpected(DecodeError::kProtocolValue);
  f.binlog_version = version;
  f.server_version = std::string(server_version.substr(0, server_version.find('\0')));
  f.create_timestamp = created;
  f.header_length = header_length;
  // What is left: the post-header lengths, the checksum algorithm byte and
  // the CRC32 (written even when the algorithm is off).
  if (r.remaining() < 1 + kBinlogChecksumSize) return std::unexpected(DecodeError::kIncomplete);
  SP_TRY(lengths, r.fixed(r.remaining() - 1 - kBinlogChecksumSize));
  f.post_header_lengths.assign(lengths.begin(), lengths.end());
  SP_TRY(algorithm, r.u8());
  if (algorithm != 0 && algorithm != 1) return std::unexpected(DecodeError::kProtocolValue);
  f.checksum_algorithm = algorithm;
  if (algorithm == 1) {
    SP_TRY(stored, r.u32());
    if (stored != binlogCrc32(whole_event.first(whole_event.size() - kBinlogChecksumSize))) {
      return std::unexpected(DecodeError::kProtocolValue);
    }
  }
  return f;
}

DecodeResult<RotateEvent> decodeRotate(ByteView data) {
  Reader r(data);
  SP_TRY(position, r.u64());
  RotateEvent e;
  e.position = position;
  e.next_file = std::string(r.restString());
  if (e.next_file.empty()) return std::unexpected(DecodeError::kIncomplete);
  return e;
}

DecodeResult<GtidEvent> decodeGtid(ByteView data) {
  Reader r(data);
  GtidEvent g;
  SP_TRY(seq_no, r.u64());
  SP_TRY(domain_id, r.u32());
  SP_TRY(flags, r.u8());
  g.seq_no = seq_no;
  g.domain_id = domain_id;
  g.flags = flags;
  if (flags & GtidEvent::kGroupCommitId) {
    SP_TRY(commit_id, r.u64());
    g.commit_id = commit_id;
  }
  return g;  // later fields (XA, flags_extra) are not needed here
}

DecodeResult<XidEvent> decodeXid(ByteView data) {
  Reader r(data);
  SP_TRY(xid, r.u64());
  SP_TRY_VOID(r.expectEnd());
  return XidEvent{xid};
}

DecodeResult<QueryEvent> decodeQuery(ByteView data, uint8_t post_header_length) {
  if (post_header_length < 13) return std::unexpected(DecodeError::kProtocolValue);
  Reader r(data);
  QueryEvent q;
  SP_TRY(thread_id, r.u32());
  SP_TRY(exec_time, r.u32());
  SP_TRY(schema_length, r.u8());
  SP_TRY(error_code, r.u16());
  SP_TRY(status_length, r.u16());
  SP_TRY_VOID(r.skip(post_header_length - 13));
  SP_TRY_VOID(r.skip(status_length));
  SP_TRY(schema, r.fixed(schema_length));
  SP_TRY(nul, r.u8());
  if (nul != 0) return std::unexpected(DecodeError::kProtocolValue);
  q.thread_id = thread_id;
  q.exec_time = exec_time;
  q.error_code = error_code;
  q.schema = std::string(schema);
  q.query = std::string(r.restString());
  return q;
}

DecodeResult<HeartbeatEvent> decodeHeartbeat(ByteView data) {
  Reader r(data);
  return HeartbeatEvent{std::string(r.restString())};
}

DecodeResult<AnnotateRowsEvent> decodeAnnotateRows(ByteView data) {
  Reader r(data);
  return AnnotateRowsEvent{std::string(r.restString())};
}

}  // namespace sp::protocol
