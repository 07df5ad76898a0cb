// Internal to the protocol .cpp files (not part of the API): how each column
// type is laid out in the binary protocol.
#pragma once
#include <cstdint>

#include "protocol/constants.hpp"

namespace sp::protocol::detail {

enum class WireLayout : uint8_t {
  kNone,      // MYSQL_TYPE_NULL: no value bytes
  kInt1,      // TINY
  kInt2,      // SHORT, YEAR
  kInt4,      // LONG, INT24
  kInt8,      // LONGLONG
  kFloat,     // FLOAT: 4-byte IEEE 754
  kDouble,    // DOUBLE: 8-byte IEEE 754
  kDateTime,  // DATE, DATETIME, TIMESTAMP (and the server-internal NEWDATE/*2 types)
  kTime,      // TIME (and TIME2)
  kLenenc,    // length-encoded string: DECIMAL, strings, blobs, ENUM, SET, BIT, JSON, GEOMETRY
  kUnknown,   // a type byte the protocol does not define
};

constexpr WireLayout layoutOf(ColumnType t) {
  switch (t) {
    case ColumnType::kNull: return WireLayout::kNone;
    case ColumnType::kTiny: return WireLayout::kInt1;
    case ColumnType::kShort:
    case ColumnType::kYear: return WireLayout::kInt2;
    case ColumnType::kLong:
    case ColumnType::kInt24: return WireLayout::kInt4;
    case ColumnType::kLongLong: return WireLayout::kInt8;
    case ColumnType::kFloat: return WireLayout::kFloat;
    case ColumnType::kDouble: return WireLayout::kDouble;
    case ColumnType::kDate:
    case ColumnType::kNewDate:
    case ColumnType::kDateTime:
    case ColumnType::kDateTime2:
    case ColumnType::kTimestamp:
    case ColumnType::kTimestamp2: return WireLayout::kDateTime;
    case ColumnType::kTime:
    case ColumnType::kTime2: return WireLayout::kTime;
    case ColumnType::kDecimal:
    case ColumnType::kNewDecimal:
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kString:
    case ColumnType::kEnum:
    case ColumnType::kSet:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
    case ColumnType::kJson:
    case ColumnType::kBit:
    case ColumnType::kGeometry: return WireLayout::kLenenc;
  }
  return WireLayout::kUnknown;
}

constexpr int intWidth(WireLayout l) {
  switch (l) {
    case WireLayout::kInt1: return 1;
    case WireLayout::kInt2: return 2;
    case WireLayout::kInt4: return 4;
    case WireLayout::kInt8: return 8;
    default: return 0;
  }
}

constexpr bool isDateOnly(ColumnType t) { return t == ColumnType::kDate || t == ColumnType::kNewDate; }

}  // namespace sp::protocol::detail
