#include "protocol/prepared.hpp"

#include "protocol/binary_detail.hpp"
#include "protocol/constants.hpp"
#include "protocol/detail_try.hpp"

namespace sp::protocol {

namespace {

constexpr uint8_t kPrepareOkStatus = 0x00;
constexpr uint8_t kUnsignedTypeFlag = 0x80;

void writeCommand(Writer& w, Command c) { w.u8(static_cast<uint8_t>(c)); }

DecodeResult<void> readCommand(Reader& r, Command expected) {
  SP_TRY(c, r.u8());
  if (c != static_cast<uint8_t>(expected)) return std::unexpected(DecodeError::kProtocolValue);
  return {};
}

// The commands that carry only a statement id.
template <class Message>
void encodeIdOnly(const Message& m, Command c, Bytes& out) {
  Writer w(out);
  writeCommand(w, c);
  w.u32(m.statement_id);
}

template <class Message>
DecodeResult<Message> decodeIdOnly(ByteView payload, Command c) {
  Reader r(payload);
  SP_TRY_VOID(readCommand(r, c));
  SP_TRY(id, r.u32());
  SP_TRY_VOID(r.expectEnd());
  Message m;
  m.statement_id = id;
  return m;
}

size_t nullBitmapSize(size_t count) { return (count + 7) / 8; }

}  // namespace

// ---------------------------------------------------------------- prepare

void encode(const StmtPrepare& m, Bytes& out) {
  Writer w(out);
  writeCommand(w, Command::kStmtPrepare);
  w.raw(m.query);
}

DecodeResult<StmtPrepare> decodeStmtPrepare(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(readCommand(r, Command::kStmtPrepare));
  return StmtPrepare{r.restString()};
}

void encode(const StmtPrepareOk& m, Bytes& out) {
  Writer w(out);
  w.u8(kPrepareOkStatus);
  w.u32(m.statement_id);
  w.u16(m.num_columns);
  w.u16(m.num_params);
  w.u8(0);  // reserved
  w.u16(m.warnings);
  if (m.metadata_follows) w.u8(*m.metadata_follows);
}

DecodeResult<StmtPrepareOk> decodeStmtPrepareOk(ByteView payload) {
  Reader r(payload);
  SP_TRY(status, r.u8());
  if (status != kPrepareOkStatus) return std::unexpected(DecodeError::kProtocolValue);
  StmtPrepareOk m;
  SP_TRY(id, r.u32());
  SP_TRY(columns, r.u16());
  SP_TRY(params, r.u16());
  SP_TRY(reserved, r.u8());
  if (reserved != 0) return std::unexpected(DecodeError::kProtocolValue);
  SP_TRY(warnings, r.u16());
  m.statement_id = id;
  m.num_columns = columns;
  m.num_params = params;
  m.warnings = warnings;
  if (!r.empty()) {
    SP_TRY(follows, r.u8());
    m.metadata_follows = follows;
  }
  SP_TRY_VOID(r.expectEnd());
  return m;
}

ColumnDefinition41 paramDefinition() {
  ColumnDefinition41 c;
  c.name = "?";
  c.character_set = kCollationBinary;
  c.type = ColumnType::kNull;
  c.flags = column_flag::kBinary;
  return c;
}

// ---------------------------------------------------------------- execute

bool StmtParamState::noteLongData(uint16_t param_id) {
  if (param_id >= num_params) return false;
  if (long_data.size() < num_params) long_data.resize(num_params, false);
  long_data[param_id] = true;
  return true;
}

EncodeResult encode(const StmtExecute& m, Bytes& out) {
  if (m.types.size() != m.values.size()) return std::unexpected(DecodeError::kProtocolValue);
  size_t start = out.size();
  Writer w(out);
  writeCommand(w, Command::kStmtExecute);
  w.u32(m.statement_id);
  w.u8(m.flags);
  w.u32(m.iteration_count);
  if (m.values.empty()) return {};
  size_t bitmap_at = out.size();
  w.zeros(nullBitmapSize(m.values.size()));
  for (size_t i = 0; i < m.values.size(); ++i) {
    // Long-data parameters get the NULL bit too, as libmariadb sends them
    // (servers ignore the bit when long data was sent).
    bool flagged = isNull(m.values[i]) || std::holds_alternative<LongDataValue>(m.values[i]);
    if (flagged) out[bitmap_at + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  w.u8(m.new_params_bound ? 1 : 0);
  if (m.new_params_bound) {
    for (const BinaryType& t : m.types) {
      w.u8(static_cast<uint8_t>(t.type));
      w.u8(t.is_unsigned ? kUnsignedTypeFlag : 0);
    }
  }
  for (size_t i = 0; i < m.values.size(); ++i) {
    const BinaryValue& v = m.values[i];
    if (isNull(v) || std::holds_alternative<LongDataValue>(v)) continue;
    if (auto ok = encodeBinaryValue(v, m.types[i], out); !ok) {
      out.resize(start);  // nothing half-written
      return ok;
    }
  }
  return {};
}

namespace {

DecodeResult<std::vector<BinaryType>> readTypes(Reader& r, size_t count) {
  // Two bytes per type: checked first so a bogus count cannot drive the allocation.
  if (r.remaining() / 2 < count) return std::unexpected(DecodeError::kIncomplete);
  std::vector<BinaryType> types(count);
  for (BinaryType& t : types) {
    SP_TRY(type, r.u8());
    SP_TRY(flag, r.u8());
    t.type = static_cast<ColumnType>(type);
    t.is_unsigned = (flag & kUnsignedTypeFlag) != 0;
  }
  return types;
}

DecodeResult<void> readParams(Reader& r, StmtExecute& m, const StmtParamState& state) {
  size_t n = state.num_params;
  SP_TRY(bitmap, r.fixed(nullBitmapSize(n)));
  SP_TRY(bound, r.u8());
  if (bound > 1) return std::unexpected(DecodeError::kProtocolValue);
  m.new_params_bound = bound == 1;
  if (m.new_params_bound) {
    SP_TRY(types, readTypes(r, n));
    m.types = std::move(types);
  } else {
    if (state.bound_types.size() != n) return std::unexpected(DecodeError::kProtocolValue);
    m.types = state.bound_types;
  }
  m.values.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    bool is_null = (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
    // Long data wins over the NULL bit (libmariadb sets the bit for long-data
    // parameters; servers use the long data).
    if (state.hasLongData(i)) {
      m.values.emplace_back(LongDataValue{});
    } else if (is_null || m.types[i].type == ColumnType::kNull) {
      m.values.emplace_back(NullValue{});
    } else {
      SP_TRY(v, decodeBinaryValue(r, m.types[i]));
      m.values.push_back(v);
    }
  }
  return {};
}

}  // namespace

DecodeResult<StmtExecute> decodeStmtExecute(ByteView payload, const StmtParamState& state) {
  Reader r(payload);
  SP_TRY_VOID(readCommand(r, Command::kStmtExecute));
  StmtExecute m;
  SP_TRY(id, r.u32());
  SP_TRY(flags, r.u8());
  SP_TRY(iterations, r.u32());
  m.statement_id = id;
  m.flags = flags;
  m.iteration_count = iterations;
  m.new_params_bound = false;
  if (state.num_params > 0) SP_TRY_VOID(readParams(r, m, state));
  SP_TRY_VOID(r.expectEnd());
  return m;
}

void rememberExecute(StmtParamState& state, const StmtExecute& m) {
  state.bound_types = m.types;
  state.long_data.clear();
}

StmtExecute retarget(const StmtExecute& m, uint32_t statement_id) {
  StmtExecute out = m;
  out.statement_id = statement_id;
  out.new_params_bound = true;
  return out;
}

// ---------------------------------------------------------------- the others

void encode(const StmtSendLongData& m, Bytes& out) {
  Writer w(out);
  writeCommand(w, Command::kStmtSendLongData);
  w.u32(m.statement_id);
  w.u16(m.param_id);
  w.raw(m.data);
}

DecodeResult<StmtSendLongData> decodeStmtSendLongData(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(readCommand(r, Command::kStmtSendLongData));
  SP_TRY(id, r.u32());
  SP_TRY(param, r.u16());
  return StmtSendLongData{id, param, r.restString()};
}

void encode(const StmtClose& m, Bytes& out) { encodeIdOnly(m, Command::kStmtClose, out); }
DecodeResult<StmtClose> decodeStmtClose(ByteView payload) {
  return decodeIdOnly<StmtClose>(payload, Command::kStmtClose);
}

void encode(const StmtReset& m, Bytes& out) { encodeIdOnly(m, Command::kStmtReset, out); }
DecodeResult<StmtReset> decodeStmtReset(ByteView payload) {
  return decodeIdOnly<StmtReset>(payload, Command::kStmtReset);
}

void encode(const StmtFetch& m, Bytes& out) {
  Writer w(out);
  writeCommand(w, Command::kStmtFetch);
  w.u32(m.statement_id);
  w.u32(m.num_rows);
}

DecodeResult<StmtFetch> decodeStmtFetch(ByteView payload) {
  Reader r(payload);
  SP_TRY_VOID(readCommand(r, Command::kStmtFetch));
  SP_TRY(id, r.u32());
  SP_TRY(rows, r.u32());
  SP_TRY_VOID(r.expectEnd());
  return StmtFetch{id, rows};
}

}  // namespace sp::protocol
