#include "proxy/net/local_result.hpp"

#include "protocol/binary_row.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"
#include "protocol/prepared.hpp"
#include "protocol/resultset.hpp"

namespace sp::proxy {

namespace {
uint8_t appendMessage(protocol::Bytes& out, protocol::Bytes& scratch, uint8_t seq) {
  seq = protocol::appendFramed(out, scratch, seq);
  scratch.clear();
  return seq;
}

std::vector<protocol::ColumnDefinition41> definitionsOf(const LocalResult& result) {
  std::vector<protocol::ColumnDefinition41> defs;
  defs.reserve(result.columns.size());
  for (size_t i = 0; i < result.columns.size(); ++i) {
    const auto& name = result.columns[i];
    protocol::ColumnDefinition41 def;
    if (i < result.definitions.size()) {
      def = result.definitions[i];
    } else {
      def.org_name = name;
      def.character_set = protocol::kCollationUtf8mb4GeneralCi;
      def.column_length = 1024;
      def.type = protocol::ColumnType::kVarString;
    }
    def.name = name;
    defs.push_back(std::move(def));
  }
  return defs;
}

uint8_t appendDefinitions(protocol::Bytes& out, protocol::Bytes& scratch,
                          const std::vector<protocol::ColumnDefinition41>& defs, uint32_t client_capabilities,
                          uint32_t mariadb_capabilities, uint16_t status_flags, uint8_t seq) {
  for (const auto& def : defs) {
    protocol::encode(def, scratch, mariadb_capabilities);
    seq = appendMessage(out, scratch, seq);
  }
  if (!(client_capabilities & protocol::cap::kDeprecateEof)) {
    protocol::encode(protocol::EofPacket{0, status_flags}, scratch);
    seq = appendMessage(out, scratch, seq);
  }
  return seq;
}

// A row as the binary protocol carries it; a value its column type cannot
// hold (never in the proxy's own results) goes as NULL.
void encodeBinaryRowFromText(const std::vector<std::optional<std::string>>& row,
                             const std::vector<protocol::ColumnDefinition41>& defs,
                             const std::vector<protocol::BinaryType>& types, protocol::Bytes& out) {
  std::vector<protocol::BinaryValue> values;
  values.reserve(row.size());
  for (size_t i = 0; i < row.size() && i < defs.size(); ++i) {
    std::optional<std::string_view> text;
    if (row[i]) text = *row[i];
    auto value = protocol::fromText(text, defs[i]);
    values.push_back(value ? *value : protocol::BinaryValue{});
  }
  if (!protocol::encodeBinaryRow(values, types, out)) {
    std::vector<protocol::BinaryValue> nulls(types.size());
    protocol::encodeBinaryRow(nulls, types, out);
  }
}
}  // namespace

uint8_t appendLocalPrepareOk(protocol::Bytes& out, const LocalResult& result, uint32_t statement_id,
                             uint32_t client_capabilities, uint16_t status_flags, uint8_t seq,
                             uint32_t mariadb_capabilities) {
  protocol::Bytes scratch;
  protocol::StmtPrepareOk ok;
  ok.statement_id = statement_id;
  ok.num_columns = static_cast<uint16_t>(result.columns.size());
  protocol::encode(ok, scratch);
  seq = appendMessage(out, scratch, seq);
  if (result.columns.empty()) return seq;
  return appendDefinitions(out, scratch, definitionsOf(result), client_capabilities, mariadb_capabilities,
                           status_flags, seq);
}

protocol::ColumnDefinition41 localTextColumn(uint32_t length, bool nullable) {
  protocol::ColumnDefinition41 c;
  c.character_set = protocol::kCollationUtf8mb4GeneralCi;
  c.column_length = length;
  c.type = protocol::ColumnType::kVarString;
  c.flags = nullable ? 0 : protocol::column_flag::kNotNull;
  c.decimals = 39;  // not a fixed number of decimals
  return c;
}

protocol::ColumnDefinition41 localNumberColumn(protocol::ColumnType type, uint32_t length, uint16_t flags) {
  protocol::ColumnDefinition41 c;
  c.character_set = 63;  // binary
  c.column_length = length;
  c.type = type;
  // As MariaDB sends them (NUM is set by client libraries).
  c.flags = flags | protocol::column_flag::kUnsigned | protocol::column_flag::kBinary;
  return c;
}

uint8_t appendLocalResult(protocol::Bytes& out, const LocalResult& result, uint32_t client_capabilities,
                          uint16_t status_flags, uint8_t seq, bool binary_rows, uint32_t mariadb_capabilities) {
  const bool deprecate_eof = client_capabilities & protocol::cap::kDeprecateEof;
  protocol::Bytes scratch;
  protocol::encodeColumnCount(result.columns.size(), scratch);
  seq = appendMessage(out, scratch, seq);
  const auto defs = definitionsOf(result);
  seq = appendDefinitions(out, scratch, defs, client_capabilities, mariadb_capabilities, status_flags, seq);
  std::vector<protocol::BinaryType> types;
  if (binary_rows) types = protocol::binaryTypesOf(defs);
  for (const auto& row : result.rows) {
    if (binary_rows) encodeBinaryRowFromText(row, defs, types, scratch);
    else protocol::encodeTextRow(row, scratch);
    seq = appendMessage(out, scratch, seq);
  }
  if (deprecate_eof) {
    protocol::OkPacket ok;
    ok.status_flags = status_flags;
    protocol::encode(ok, client_capabilities, scratch, protocol::kEofHeader);
  } else {
    protocol::encode(protocol::EofPacket{0, status_flags}, scratch);
  }
  return appendMessage(out, scratch, seq);
}

}  // namespace sp::proxy
