// Prepared-statement commands (COM_STMT_*) and the COM_STMT_PREPARE answer.
// Command payloads include their command byte; decoders check it.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/binary_value.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// MariaDB: a statement id meaning "the statement prepared last on this
// connection" (used by COM_STMT_EXECUTE sent right after COM_STMT_PREPARE in
// one batch). It decodes like any id; the caller decides what it means.
inline constexpr uint32_t kLastPreparedStatementId = 0xffffffff;

// COM_STMT_PREPARE: int<1> 0x16, string<EOF> query. `query` views the payload.
struct StmtPrepare {
  std::string_view query;
  bool operator==(const StmtPrepare&) const = default;
};
void encode(const StmtPrepare& m, Bytes& out);
DecodeResult<StmtPrepare> decodeStmtPrepare(ByteView payload);

// COM_STMT_PREPARE_OK, the first packet of a successful prepare response,
// followed by num_params parameter definitions and num_columns column
// definitions (each group followed by an EOF unless CLIENT_DEPRECATE_EOF).
struct StmtPrepareOk {
  // int<1> status 0x00
  uint32_t statement_id = 0;  // int<4>
  uint16_t num_columns = 0;   // int<2>
  uint16_t num_params = 0;    // int<2>
  // int<1> reserved 0x00
  uint16_t warnings = 0;      // int<2>
  // int<1>, MySQL 8 with CLIENT_OPTIONAL_RESULTSET_METADATA only: 0 means the
  // definitions are not sent.
  std::optional<uint8_t> metadata_follows;
  bool operator==(const StmtPrepareOk&) const = default;
};
void encode(const StmtPrepareOk& m, Bytes& out);
// 12 bytes, or 13 with metadata_follows. The reserved byte must be 0.
DecodeResult<StmtPrepareOk> decodeStmtPrepareOk(ByteView payload);

// The parameter definition MariaDB sends for each `?` of a prepare response
// (catalog "def", name "?", type NULL, binary charset, BINARY flag): for a
// proxy that answers COM_STMT_PREPARE itself.
ColumnDefinition41 paramDefinition();

// What a session remembers about a statement's parameters between commands,
// because COM_STMT_EXECUTE cannot be decoded without it.
struct StmtParamState {
  uint16_t num_params = 0;               // from COM_STMT_PREPARE_OK
  std::vector<BinaryType> bound_types;   // types of the last execute that sent them (empty before)
  std::vector<bool> long_data;           // per parameter: COM_STMT_SEND_LONG_DATA since the
                                         // last execute/reset (empty = none)
  // Records a COM_STMT_SEND_LONG_DATA; false when param_id is out of range.
  bool noteLongData(uint16_t param_id);
  bool hasLongData(size_t param) const { return param < long_data.size() && long_data[param]; }
};

// COM_STMT_EXECUTE:
//   int<1> 0x17, int<4> statement_id, int<1> flags (cursor type), int<4> iteration_count;
//   when num_params > 0: binary<(num_params+7)/8> NULL bitmap (bit i = param i),
//   int<1> new_params_bound_flag, [num_params x (int<1> type, int<1> 0x80 if unsigned)],
//   then the value of each parameter that is neither NULL nor sent as long data.
struct StmtExecute {
  uint32_t statement_id = 0;
  uint8_t flags = 0;              // 0 = no cursor (CURSOR_TYPE_*)
  uint32_t iteration_count = 1;
  bool new_params_bound = true;   // whether `types` is on the wire
  std::vector<BinaryType> types;  // effective types (decoded: from the state when not sent)
  std::vector<BinaryValue> values;  // NullValue, LongDataValue, or a value of types[i]
  bool operator==(const StmtExecute&) const = default;
};
// Needs types.size() == values.size() (the parameter count). The NULL bitmap
// comes from the values (NullValue, and LongDataValue like libmariadb does);
// a value that does not fit its type is kProtocolValue, with nothing appended.
EncodeResult encode(const StmtExecute& m, Bytes& out);
// Values view the payload. A parameter with long data in `state` is
// LongDataValue whatever its NULL bit says (servers do the same); a NULL-typed
// one is NullValue. kProtocolValue when new_params_bound is 0 and the state has
// no bound types. Bits of the NULL bitmap beyond num_params and bits
// of the type flag other than 0x80 are ignored (as servers do).
DecodeResult<StmtExecute> decodeStmtExecute(ByteView payload, const StmtParamState& state);
// After a successful execute decode: remember its types, clear long data.
void rememberExecute(StmtParamState& state, const StmtExecute& m);
// The same execute for another statement id (a backend's), always sending the
// types: the backend statement's own bound types may differ from the client's.
StmtExecute retarget(const StmtExecute& m, uint32_t statement_id);

// COM_STMT_SEND_LONG_DATA: int<1> 0x18, int<4> statement_id, int<2> param_id,
// binary<EOF> data (views the payload). No response.
struct StmtSendLongData {
  uint32_t statement_id = 0;
  uint16_t param_id = 0;
  std::string_view data;
  bool operator==(const StmtSendLongData&) const = default;
};
void encode(const StmtSendLongData& m, Bytes& out);
DecodeResult<StmtSendLongData> decodeStmtSendLongData(ByteView payload);

// COM_STMT_CLOSE: int<1> 0x19, int<4> statement_id. No response.
struct StmtClose {
  uint32_t statement_id = 0;
  bool operator==(const StmtClose&) const = default;
};
void encode(const StmtClose& m, Bytes& out);
DecodeResult<StmtClose> decodeStmtClose(ByteView payload);

// COM_STMT_RESET: int<1> 0x1a, int<4> statement_id. Answered by OK or ERR.
struct StmtReset {
  uint32_t statement_id = 0;
  bool operator==(const StmtReset&) const = default;
};
void encode(const StmtReset& m, Bytes& out);
DecodeResult<StmtReset> decodeStmtReset(ByteView payload);

// COM_STMT_FETCH: int<1> 0x1c, int<4> statement_id, int<4> num_rows.
// Answered by binary rows and an end marker, or ERR (ResponseKind::kFetch).
struct StmtFetch {
  uint32_t statement_id = 0;
  uint32_t num_rows = 0;
  bool operator==(const StmtFetch&) const = default;
};
void encode(const StmtFetch& m, Bytes& out);
DecodeResult<StmtFetch> decodeStmtFetch(ByteView payload);

}  // namespace sp::protocol
