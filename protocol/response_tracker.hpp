// Socket-free state machine that follows a server's response to one command,
// packet by packet, without decoding rows. The proxy uses it to forward a
// response as it streams and to know when it is complete, and where the
// status flags (transaction state) are.
#pragma once
#include <cstdint>

#include "protocol/constants.hpp"
#include "protocol/prepared.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// What a packet was, in the context of the response.
enum class ResponseEvent : uint8_t {
  kOk,           // an OK packet ending a response (or one result of a multi-result)
  kErr,          // an ERR packet; the response is complete
  kLocalInfile,  // 0xfb LOCAL INFILE request (the proxy refuses these)
  kColumnCount,  // start of a result set
  kColumnDef,    // one column definition
  kColumnsEof,   // the EOF after the column definitions (classic EOF style only)
  kRow,          // one row (text or binary; not decoded)
  kRowsEnd,      // EOF, or the 0xfe OK under DEPRECATE_EOF, ending the rows; also the
                 // same marker ending a COM_FIELD_LIST response
  kStatistics,   // the plain-text answer to COM_STATISTICS
  kPrepareOk,    // COM_STMT_PREPARE_OK (see prepareOk())
  kParamDef,     // one parameter definition of a prepare response
  kParamsEof,    // the EOF after the parameter definitions (classic EOF style only)
};

enum class ResponseKind : uint8_t {
  kQuery,       // COM_QUERY and other commands answered by OK/ERR/result sets
  kFieldList,   // COM_FIELD_LIST: column definitions then EOF, no column count
  kStatistics,  // COM_STATISTICS: one string packet
  kPrepare,     // COM_STMT_PREPARE: PREPARE_OK, parameter definitions (+EOF),
                // column definitions (+EOF); or ERR
  kFetch,       // COM_STMT_FETCH: binary rows then the end marker; or ERR
  kCursorExecute,  // COM_STMT_EXECUTE with a cursor type: like kQuery, but a result
                   // set whose column EOF says SERVER_STATUS_CURSOR_EXISTS ends there
                   // (rows come with COM_STMT_FETCH). Under kQuery that flag is only a
                   // status: a CALL whose procedure opened a cursor still sends rows.
  kNone,        // no response at all (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA,
                // COM_QUIT): done() from the start; the caller must not read
};

// The response kind a command gets. COM_STMT_EXECUTE and COM_STMT_RESET are
// kQuery: an execute answers like a query, with binary rows; one that opened a
// cursor ends after its column definitions (kCursorExecute).
ResponseKind responseKindOf(Command command);
// The same from a whole command packet: a COM_STMT_EXECUTE whose flags ask
// for a cursor is kCursorExecute.
ResponseKind responseKindOf(ByteView command_payload);

class ResponseTracker {
 public:
  // `capabilities`: the negotiated capability flags of the connection (what the
  // server uses to shape its answer: CLIENT_DEPRECATE_EOF, CLIENT_SESSION_TRACK).
  // `mariadb_capabilities`: the negotiated MariaDB extended capabilities
  // (kCacheMetadata adds a byte to the column count, kExtendedTypeInfo a field
  // to column definitions).
  ResponseTracker(ResponseKind kind, uint32_t capabilities, uint32_t mariadb_capabilities = 0);

  // Classifies the next packet of the response (the joined logical message).
  // An error means the server broke the protocol: the tracker must not be fed
  // again and the connection should be closed. kLocalInfile leaves the tracker
  // waiting for the OK/ERR the server sends after the client's file data.
  DecodeResult<ResponseEvent> onPacket(ByteView payload);
  // True once the final packet of the whole response (all results) was seen.
  bool done() const { return state_ == State::kDone; }
  // Status flags of the last OK/EOF seen (0 until one is seen).
  uint16_t statusFlags() const { return status_flags_; }
  uint64_t affectedRows() const { return affected_rows_; }
  uint64_t lastInsertId() const { return last_insert_id_; }
  uint16_t warnings() const { return warnings_; }
  // kPrepare: the PREPARE_OK once kPrepareOk was returned.
  const StmtPrepareOk& prepareOk() const { return prepare_ok_; }

 private:
  enum class State : uint8_t { kFirst, kParams, kParamsEof, kColumns, kColumnsEof, kRows, kDone };
  DecodeResult<ResponseEvent> onFirst(ByteView payload);
  DecodeResult<ResponseEvent> onPrepareOk(ByteView payload);
  DecodeResult<ResponseEvent> onParam(ByteView payload);
  State prepareColumnsOrDone();
  DecodeResult<ResponseEvent> onColumn(ByteView payload);
  DecodeResult<ResponseEvent> onRow(ByteView payload);
  DecodeResult<ResponseEvent> onErr(ByteView payload);
  DecodeResult<ResponseEvent> onEnd(ByteView payload, ResponseEvent event);
  DecodeResult<void> takeEof(ByteView payload);
  State afterColumns() const;

  ResponseKind kind_;
  uint32_t capabilities_;
  uint32_t mariadb_capabilities_;
  State state_ = State::kFirst;
  uint64_t columns_left_ = 0;
  uint16_t status_flags_ = 0;
  uint16_t warnings_ = 0;
  uint64_t affected_rows_ = 0;
  uint64_t last_insert_id_ = 0;
  StmtPrepareOk prepare_ok_;
};

}  // namespace sp::protocol
