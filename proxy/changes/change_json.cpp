#include "proxy/changes/change_json.hpp"

#include <cmath>

#include <fmt/format.h>

#include "proxy/observe/slow_log.hpp"

namespace sp::proxy::changes {

namespace {

using protocol::BinlogValue;

// Length of the UTF-8 sequence at text[i] (1-4), 0 when it is not one.
size_t sequenceLength(std::string_view text, size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

bool validUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = sequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void appendImage(std::string& out, const std::vector<std::string>& columns, const std::vector<BinlogValue>& image) {
  out += '{';
  for (size_t c = 0; c < columns.size() && c < image.size(); ++c) {
    if (c) out += ',';
    appendJsonString(out, columns[c]);
    out += ':';
    appendJsonValue(out, image[c]);
  }
  out += '}';
}

}  // namespace

std::string_view opName(ChangeRow::Op op) {
  switch (op) {
    case ChangeRow::Op::kInsert: return "insert";
    case ChangeRow::Op::kUpdate: return "update";
    case ChangeRow::Op::kDelete: return "delete";
  }
  return "?";
}

void appendJsonValue(std::string& out, const BinlogValue& v) {
  switch (v.kind) {
    case BinlogValue::Kind::kNull: out += "null"; return;
    case BinlogValue::Kind::kInt: out += std::to_string(v.i); return;
    case BinlogValue::Kind::kUInt:
    case BinlogValue::Kind::kBit: out += std::to_string(v.u); return;
    case BinlogValue::Kind::kDouble:
      out += std::isfinite(v.d) ? fmt::format("{}", v.d) : std::string("null");
      return;
    case BinlogValue::Kind::kDecimal:
    case BinlogValue::Kind::kTemporal: appendJsonString(out, v.text); return;
    case BinlogValue::Kind::kBytes:
      if (validUtf8(v.text)) {
        appendJsonString(out, v.text);
      } else {
        out += "{\"hex\":\"";
        for (unsigned char b : v.text) out += fmt::format("{:02x}", b);
        out += "\"}";
      }
      return;
  }
}

std::string keyText(const ChangeRow& row) {
  const auto& image = row.after.empty() ? row.before : row.after;
  if (row.key_index >= image.size()) return "null";
  std::string out;
  appendJsonValue(out, image[row.key_index]);
  return out;
}

std::string changeJson(const ChangeRow& row, const ChangeTransaction& txn, std::string_view position, bool last) {
  std::string out = "{\"table\":";
  appendJsonString(out, row.table->name);
  out += ",\"key\":" + keyText(row) + ",\"op\":\"" + std::string(opName(row.op)) + '"';
  if (!row.before.empty()) {
    out += ",\"before\":";
    appendImage(out, *row.columns, row.before);
  }
  if (!row.after.empty()) {
    out += ",\"after\":";
    appendImage(out, *row.columns, row.after);
  }
  out += fmt::format(",\"ts\":{},\"backend\":", txn.timestamp);
  appendJsonString(out, txn.backend);
  out += ",\"gtid\":";
  if (txn.gtid) {
    appendJsonString(out, formatGtid(*txn.gtid));
  } else {
    out += "null";
  }
  out += ",\"position\":";
  appendJsonString(out, position);
  out += last ? ",\"last\":true}" : ",\"last\":false}";
  return out;
}

std::string heartbeatJson(std::string_view position) {
  std::string out = "{\"heartbeat\":true,\"position\":";
  appendJsonString(out, position);
  out += '}';
  return out;
}

}  // namespace sp::proxy::changes
