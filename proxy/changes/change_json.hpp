// One JSON line per row change (docs/changes.md, "Format"):
//   {"table":"msg","key":7,"op":"update","before":{...},"after":{...},
//    "ts":1764859200,"backend":"db0","gtid":"0-3307-81",
//    "position":"db0:0-3307-81,db1:0-3308-40","last":true}
// Values: integers and BIT as JSON numbers, FLOAT/DOUBLE as numbers (null
// when not finite), DECIMAL and temporal values as their text (TIMESTAMP in
// UTC), strings as JSON strings when they are valid UTF-8, otherwise
// {"hex":"..."} of the raw bytes. `position` is where a consumer resumes
// after this row's transaction; `last` marks the transaction's last row.
// Pure.
#pragma once
#include <string>
#include <string_view>

#include "proxy/changes/change_assembler.hpp"

namespace sp::proxy::changes {

std::string_view opName(ChangeRow::Op op);
void appendJsonValue(std::string& out, const protocol::BinlogValue& v);
// The line, without the trailing newline.
std::string changeJson(const ChangeRow& row, const ChangeTransaction& txn, std::string_view position, bool last);
// {"heartbeat":true,"position":"..."}: an idle stream's line, so a consumer
// sees the stream alive and may save the position.
std::string heartbeatJson(std::string_view position);
// The key column's value as text ("7"), "null" when absent.
std::string keyText(const ChangeRow& row);

}  // namespace sp::proxy::changes
