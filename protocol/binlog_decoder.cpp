#include "protocol/binlog_decoder.hpp"

namespace sp::protocol {

namespace {

BinlogError fail(DecodeError code, std::string what) { return BinlogError{code, std::move(what)}; }

BinlogError failIn(DecodeError code, const char* event) {
  return fail(code, std::string("malformed ") + event + " event (" + std::string(toString(code)) + ")");
}

bool isQueryCommit(std::string_view q) { return q == "COMMIT"; }

}  // namespace

BinlogResult<BinlogRowsEvent> BinlogDecoder::rows(const SplitEvent& split) {
  auto data = decodeRowsEvent(split.data, split.header.type, format_.postHeaderLength(split.header.type));
  if (!data) return std::unexpected(failIn(data.error(), "rows"));
  auto table = tables_.find(data->table_id);
  if (table == tables_.end()) {
    return std::unexpected(fail(DecodeError::kProtocolValue,
                                "rows event for table id " + std::to_string(data->table_id) + " without TABLE_MAP"));
  }
  auto images = decodeRowImages(table->second, *data);
  if (!images) {
    return std::unexpected(fail(images.error(), "malformed row image of " + table->second.schema + "." +
                                                    table->second.table + " (" +
                                                    std::string(toString(images.error())) + ")"));
  }
  BinlogRowsEvent out;
  out.kind = isUpdateRowsType(data->type)   ? BinlogRowsEvent::Kind::kUpdate
             : isDeleteRowsType(data->type) ? BinlogRowsEvent::Kind::kDelete
                                            : BinlogRowsEvent::Kind::kInsert;
  out.schema = table->second.schema;
  out.table = table->second.table;
  out.column_names = table->second.column_names;
  out.column_types = table->second.column_types;
  out.primary_key = table->second.primary_key;
  out.rows = std::move(*images);
  for (size_t c = 0; c < data->present.size(); ++c) {
    if (!data->present[c] || (!data->present_after.empty() && !data->present_after[c])) out.full_images = false;
  }
  return out;
}

BinlogResult<BinlogEvent> BinlogDecoder::decode(ByteView raw) {
  auto header = decodeBinlogEventHeader(raw);
  if (!header) return std::unexpected(failIn(header.error(), "binlog event header"));
  BinlogEvent event;
  event.header = *header;

  if (header->type == binlog_type::kFormatDescription) {
    auto format = decodeFormatDescription(raw);
    if (!format) return std::unexpected(failIn(format.error(), "FORMAT_DESCRIPTION"));
    format_ = std::move(*format);
    have_format_ = true;
    checksum_ = format_.checksum_algorithm == 1;
    // A new log (or the start of the stream): table ids start over.
    tables_.clear();
    event.body = BinlogOtherEvent{header->type};
    // Resent at the start of a dump from the middle of a file: its log_pos
    // (the end of the file's own FORMAT_DESCRIPTION) is behind the position.
    if (header->log_pos > position_.pos) position_.pos = header->log_pos;
    event.end = position_;
    return event;
  }
  auto split = splitEvent(raw, checksum_);
  if (!split) {
    return std::unexpected(split.error() == DecodeError::kProtocolValue && checksum_
                               ? fail(DecodeError::kProtocolValue, "binlog event checksum mismatch (type " +
                                                                       std::to_string(header->type) + ")")
                               : failIn(split.error(), "binlog"));
  }
  const uint8_t type = header->type;
  if (type != binlog_type::kRotate && type != binlog_type::kHeartbeat && !have_format_) {
    return std::unexpected(fail(DecodeError::kProtocolValue, "binlog event before FORMAT_DESCRIPTION"));
  }

  if (type == binlog_type::kRotate) {
    auto rotate = decodeRotate(split->data);
    if (!rotate) return std::unexpected(failIn(rotate.error(), "ROTATE"));
    position_ = BinlogPosition{rotate->next_file, rotate->position};
    event.end = position_;
    event.body = BinlogRotateEvent{std::move(*rotate)};
    return event;
  }
  if (type == binlog_type::kHeartbeat) {
    // The position of the idle dump, in the file it names: nothing was
    // skipped (only events the server filters out, which this reader never
    // needs), so the position moves there.
    auto beat = decodeHeartbeat(split->data);
    if (!beat) return std::unexpected(failIn(beat.error(), "HEARTBEAT"));
    if (!beat->file.empty() && header->log_pos != 0) position_ = BinlogPosition{beat->file, header->log_pos};
    event.end = position_;
    event.body = BinlogHeartbeatEvent{};
    return event;
  }
  if (type == binlog_type::kStartEncryption) {
    return std::unexpected(fail(DecodeError::kProtocolValue, "encrypted binlog (encrypt_binlog=ON) is not supported"));
  }
  if (type == binlog_type::kQueryCompressed ||
      (type >= binlog_type::kFirstCompressedRows && type <= binlog_type::kLastCompressedRows)) {
    return std::unexpected(fail(DecodeError::kProtocolValue,
                                "compressed binlog event (log_bin_compress=ON) is not supported: turn it off"));
  }

  if (type == binlog_type::kTableMap) {
    auto table = decodeTableMap(split->data, format_.postHeaderLength(type));
    if (!table) return std::unexpected(failIn(table.error(), "TABLE_MAP"));
    const uint64_t id = table->table_id;
    tables_.insert_or_assign(id, std::move(*table));
    event.body = BinlogOtherEvent{type};
  } else if (isRowsEventType(type)) {
    auto rows_event = rows(*split);
    if (!rows_event) return std::unexpected(rows_event.error());
    event.body = std::move(*rows_event);
  } else if (type == binlog_type::kXid) {
    auto xid = decodeXid(split->data);
    if (!xid) return std::unexpected(failIn(xid.error(), "XID"));
    event.body = BinlogCommitEvent{xid->xid};
  } else if (type == binlog_type::kGtid) {
    auto gtid = decodeGtid(split->data);
    if (!gtid) return std::unexpected(failIn(gtid.error(), "GTID"));
    event.body = BinlogGtidEvent{*gtid};
  } else if (type == binlog_type::kQuery) {
    auto query = decodeQuery(split->data, format_.postHeaderLength(type));
    if (!query) return std::unexpected(failIn(query.error(), "QUERY"));
    if (isQueryCommit(query->query)) {
      event.body = BinlogCommitEvent{};
    } else {
      event.body = BinlogQueryEvent{std::move(query->schema), std::move(query->query)};
    }
  } else {
    event.body = BinlogOtherEvent{type};
  }
  if (header->log_pos != 0 && !(header->flags & binlog_flag::kArtificial)) position_.pos = header->log_pos;
  event.end = position_;
  return event;
}

}  // namespace sp::protocol
