#include "proxy/local_result.hpp"

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/packet.hpp"
#include "protocol/resultset.hpp"

namespace sp::proxy {

namespace {
uint8_t appendMessage(protocol::Bytes& out, protocol::Bytes& scratch, uint8_t seq) {
  seq = protocol::appendFramed(out, scratch, seq);
  scratch.clear();
  return seq;
}
}  // namespace

uint8_t appendLocalResult(protocol::Bytes& out, const LocalResult& result, uint32_t client_capabilities,
                          uint16_t status_flags, uint8_t seq) {
  const bool deprecate_eof = client_capabilities & protocol::cap::kDeprecateEof;
  protocol::Bytes scratch;
  protocol::encodeColumnCount(result.columns.size(), scratch);
  seq = appendMessage(out, scratch, seq);
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
    protocol::encode(def, scratch);
    seq = appendMessage(out, scratch, seq);
  }
  if (!deprecate_eof) {
    protocol::encode(protocol::EofPacket{0, status_flags}, scratch);
    seq = appendMessage(out, scratch, seq);
  }
  for (const auto& row : result.rows) {
    protocol::encodeTextRow(row, scratch);
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
