#include "protocol/response_tracker.hpp"

#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"
#include "protocol/resultset.hpp"

namespace sp::protocol {

ResponseTracker::ResponseTracker(ResponseKind kind, uint32_t capabilities,
                                 uint32_t mariadb_capabilities)
    : kind_(kind),
      capabilities_(capabilities),
      mariadb_capabilities_(mariadb_capabilities),
      state_(kind == ResponseKind::kNone    ? State::kDone
             : kind == ResponseKind::kFetch ? State::kRows
                                            : State::kFirst) {}

ResponseKind responseKindOf(Command command) {
  switch (command) {
    case Command::kFieldList: return ResponseKind::kFieldList;
    case Command::kStatistics: return ResponseKind::kStatistics;
    case Command::kStmtPrepare: return ResponseKind::kPrepare;
    case Command::kStmtFetch: return ResponseKind::kFetch;
    case Command::kStmtClose:
    case Command::kStmtSendLongData:
    case Command::kQuit: return ResponseKind::kNone;
    default: return ResponseKind::kQuery;
  }
}

ResponseKind responseKindOf(ByteView command_payload) {
  if (command_payload.empty()) return ResponseKind::kQuery;
  auto command = static_cast<Command>(command_payload[0]);
  // int<1> 0x17, int<4> statement id, int<1> flags (cursor type), ...
  constexpr size_t kFlagsOffset = 5;
  if (command == Command::kStmtExecute && command_payload.size() > kFlagsOffset &&
      command_payload[kFlagsOffset] != 0) {
    return ResponseKind::kCursorExecute;
  }
  return responseKindOf(command);
}

DecodeResult<ResponseEvent> ResponseTracker::onPacket(ByteView payload) {
  if (payload.empty()) return std::unexpected(DecodeError::kIncomplete);
  switch (state_) {
    case State::kFirst:
      return onFirst(payload);
    case State::kParams:
      return onParam(payload);
    case State::kParamsEof: {
      if (!isEofPacket(payload)) return std::unexpected(DecodeError::kProtocolValue);
      SP_TRY_VOID(takeEof(payload));
      state_ = prepareColumnsOrDone();
      return ResponseEvent::kParamsEof;
    }
    case State::kColumns:
      return onColumn(payload);
    case State::kColumnsEof: {
      if (!isEofPacket(payload)) return std::unexpected(DecodeError::kProtocolValue);
      SP_TRY_VOID(takeEof(payload));
      // A prepare response has no rows: its column section ends it. So does an
      // execute that opened a cursor (rows come with COM_STMT_FETCH); under
      // DEPRECATE_EOF that answer ends with a 0xfe OK, reported as kRowsEnd.
      bool no_rows = kind_ == ResponseKind::kPrepare ||
                     (kind_ == ResponseKind::kCursorExecute && (status_flags_ & status::kCursorExists));
      state_ = no_rows ? State::kDone : State::kRows;
      return ResponseEvent::kColumnsEof;
    }
    case State::kRows:
      return onRow(payload);
    case State::kDone:
      break;
  }
  return std::unexpected(DecodeError::kProtocolValue);  // nothing may follow the end
}

DecodeResult<ResponseEvent> ResponseTracker::onFirst(ByteView payload) {
  if (isErrPacket(payload)) return onErr(payload);
  switch (kind_) {
    case ResponseKind::kStatistics:
      state_ = State::kDone;
      return ResponseEvent::kStatistics;
    case ResponseKind::kFieldList:
      return onColumn(payload);
    case ResponseKind::kPrepare:
      return onPrepareOk(payload);
    case ResponseKind::kQuery:
    case ResponseKind::kCursorExecute:
    case ResponseKind::kFetch:
    case ResponseKind::kNone:
      break;
  }
  if (payload[0] == kOkHeader) {
    SP_TRY(ok, decodeOkPacket(payload, capabilities_));
    status_flags_ = ok.status_flags;
    warnings_ = ok.warnings;
    affected_rows_ = ok.affected_rows;
    last_insert_id_ = ok.last_insert_id;
    state_ = (ok.status_flags & status::kMoreResultsExist) ? State::kFirst : State::kDone;
    return ResponseEvent::kOk;
  }
  if (payload[0] == kLocalInfileHeader) return ResponseEvent::kLocalInfile;
  SP_TRY(count, decodeColumnCount(payload, mariadb_capabilities_));
  columns_left_ = count.count;
  // With MariaDB metadata caching the definitions may be skipped entirely.
  state_ = count.metadata_follows ? State::kColumns : afterColumns();
  return ResponseEvent::kColumnCount;
}

DecodeResult<ResponseEvent> ResponseTracker::onPrepareOk(ByteView payload) {
  SP_TRY(ok, decodeStmtPrepareOk(payload));
  prepare_ok_ = ok;
  warnings_ = ok.warnings;
  // MySQL 8's optional metadata: metadata_follows 0 means no definitions at all.
  if (ok.metadata_follows && *ok.metadata_follows == 0) {
    state_ = State::kDone;
  } else {
    columns_left_ = ok.num_params;
    state_ = columns_left_ > 0 ? State::kParams : prepareColumnsOrDone();
  }
  return ResponseEvent::kPrepareOk;
}

// Parameter definitions are column definitions (name "?"); columns_left_
// counts the parameters left while in kParams.
DecodeResult<ResponseEvent> ResponseTracker::onParam(ByteView payload) {
  SP_TRY_VOID(decodeColumnDefinitionView(payload, mariadb_capabilities_));
  if (--columns_left_ == 0) {
    state_ = (capabilities_ & cap::kDeprecateEof) ? prepareColumnsOrDone() : State::kParamsEof;
  }
  return ResponseEvent::kParamDef;
}

ResponseTracker::State ResponseTracker::prepareColumnsOrDone() {
  columns_left_ = prepare_ok_.num_columns;
  return columns_left_ > 0 ? State::kColumns : State::kDone;
}

DecodeResult<ResponseEvent> ResponseTracker::onColumn(ByteView payload) {
  if (kind_ == ResponseKind::kFieldList) {
    // COM_FIELD_LIST has no column count: definitions run until EOF or ERR.
    if (isErrPacket(payload)) return onErr(payload);
    // Reported like the end of rows: it is the marker that ends the response,
    // in the same EOF / 0xfe-OK form (a relay translating styles treats both alike).
    if (isEofPacket(payload)) return onEnd(payload, ResponseEvent::kRowsEnd);
    SP_TRY_VOID(decodeColumnDefinitionView(payload, mariadb_capabilities_));
    state_ = State::kColumns;
    return ResponseEvent::kColumnDef;
  }
  SP_TRY_VOID(decodeColumnDefinitionView(payload, mariadb_capabilities_));
  if (--columns_left_ == 0) state_ = afterColumns();
  return ResponseEvent::kColumnDef;
}

ResponseTracker::State ResponseTracker::afterColumns() const {
  if (!(capabilities_ & cap::kDeprecateEof)) return State::kColumnsEof;
  return kind_ == ResponseKind::kPrepare ? State::kDone : State::kRows;
}

DecodeResult<ResponseEvent> ResponseTracker::onRow(ByteView payload) {
  if (isErrPacket(payload)) return onErr(payload);
  // A row may also start with 0xfe (a lenenc length >= 2^24), but then it is
  // at least 2^24 + 9 bytes long, so the size tells the two apart.
  bool end = (capabilities_ & cap::kDeprecateEof)
                 ? payload[0] == kEofHeader && payload.size() < kMaxPacketPayload
                 : isEofPacket(payload);
  if (end) return onEnd(payload, ResponseEvent::kRowsEnd);
  return ResponseEvent::kRow;
}

DecodeResult<ResponseEvent> ResponseTracker::onErr(ByteView payload) {
  SP_TRY_VOID(decodeErrPacket(payload));
  state_ = State::kDone;
  return ResponseEvent::kErr;
}

DecodeResult<ResponseEvent> ResponseTracker::onEnd(ByteView payload, ResponseEvent event) {
  SP_TRY_VOID(takeEof(payload));
  bool more = kind_ == ResponseKind::kQuery && (status_flags_ & status::kMoreResultsExist);
  state_ = more ? State::kFirst : State::kDone;
  return event;
}

// An end-of-section marker: a classic EOF, or under CLIENT_DEPRECATE_EOF an OK
// packet with the 0xfe header.
DecodeResult<void> ResponseTracker::takeEof(ByteView payload) {
  if (capabilities_ & cap::kDeprecateEof) {
    SP_TRY(ok, decodeOkPacket(payload, capabilities_));
    status_flags_ = ok.status_flags;
    warnings_ = ok.warnings;
    affected_rows_ = ok.affected_rows;
    last_insert_id_ = ok.last_insert_id;
    return {};
  }
  SP_TRY(eof, decodeEofPacket(payload));
  status_flags_ = eof.status_flags;
  warnings_ = eof.warnings;
  return {};
}

}  // namespace sp::protocol
