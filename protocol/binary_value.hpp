// Values of the binary protocol (COM_STMT_EXECUTE parameters and binary result
// rows): their wire encoding per column type, and conversions to and from the
// text the text protocol would show for the same column.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/constants.hpp"
#include "protocol/resultset.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// SQL NULL. On the wire a NULL has no value bytes: it is a bit in a NULL bitmap.
struct NullValue {
  bool operator==(const NullValue&) const = default;
};

// DATE / DATETIME / TIMESTAMP: int<1> length (0, 4, 7 or 11), then
// int<2> year, int<1> month, int<1> day [, int<1> hour, minute, second [, int<4> microsecond]].
struct BinaryDateTime {
  uint16_t year = 0;
  uint8_t month = 0;
  uint8_t day = 0;
  uint8_t hour = 0;
  uint8_t minute = 0;
  uint8_t second = 0;
  uint32_t microsecond = 0;
  bool operator==(const BinaryDateTime&) const = default;
};

// TIME: int<1> length (0, 8 or 12), then int<1> is_negative, int<4> days,
// int<1> hour, minute, second [, int<4> microsecond].
struct BinaryTime {
  bool negative = false;
  uint32_t days = 0;
  uint8_t hour = 0;
  uint8_t minute = 0;
  uint8_t second = 0;
  uint32_t microsecond = 0;
  bool operator==(const BinaryTime&) const = default;
};

// A COM_STMT_EXECUTE parameter whose value was sent before with
// COM_STMT_SEND_LONG_DATA: the execute packet carries no bytes for it.
struct LongDataValue {
  bool operator==(const LongDataValue&) const = default;
};

// One value. Integers are int64_t for signed types and uint64_t for unsigned
// ones; string-like types (DECIMAL, strings, blobs, ENUM, SET, BIT, JSON,
// GEOMETRY) are views into the decoded payload (or the caller's storage).
// The wire width comes from the column/parameter type, not from the value.
using BinaryValue = std::variant<NullValue, int64_t, uint64_t, float, double, BinaryDateTime,
                                 BinaryTime, std::string_view, LongDataValue>;

inline bool isNull(const BinaryValue& v) { return std::holds_alternative<NullValue>(v); }

// A parameter or column type as the binary protocol needs it.
struct BinaryType {
  ColumnType type = ColumnType::kNull;
  bool is_unsigned = false;
  bool operator==(const BinaryType&) const = default;
};
BinaryType binaryTypeOf(const ColumnDefinition41& column);

// Errors of the encoders: kProtocolValue when the value does not fit the type
// (a string for an INT, 300 for a TINYINT, NULL where bytes are needed).
using EncodeResult = DecodeResult<void>;

// Reads one non-NULL value of type `t`. kProtocolValue for a type byte the
// binary protocol does not define (its length is unknown) or a bad date length.
DecodeResult<BinaryValue> decodeBinaryValue(Reader& r, BinaryType t);
// Appends the value bytes (NullValue and LongDataValue are kProtocolValue: they
// have no value bytes, the row/execute encoders handle them). Dates and times
// use the shortest length, as servers do.
EncodeResult encodeBinaryValue(const BinaryValue& v, BinaryType t, Bytes& out);

// The text the text protocol shows for this value in `column`: integers in
// decimal (ZEROFILL padded to the display width), FLOAT/DOUBLE as MariaDB
// prints them (see docs/protocol.md), dates 'YYYY-MM-DD', datetimes
// 'YYYY-MM-DD HH:MM:SS[.ffffff]' with the column's decimals, times
// '[-]HH:MM:SS[.ffffff]'. std::nullopt for NULL (and LongDataValue).
std::optional<std::string> toText(const BinaryValue& v, const ColumnDefinition41& column);

// The value of `text` (std::nullopt: NULL) for `column`, to build binary rows
// from text results. String-like values are views into `text`.
DecodeResult<BinaryValue> fromText(std::optional<std::string_view> text,
                                   const ColumnDefinition41& column);

// A bound parameter reduced to what routing compares: integers, doubles,
// strings (DECIMAL, strings, and dates/times rendered as text), or NULL.
struct ParamDescription {
  // kDecimal: a DECIMAL-typed parameter (its digits in `s`); compared exactly
  // by the server, unlike a string, which an integer column compares as DOUBLE.
  enum class Kind : uint8_t { kNull, kSigned, kUnsigned, kDouble, kString, kDecimal };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kString: the bytes, unquoted
  bool operator==(const ParamDescription&) const = default;
};
// DATE parameters render as 'YYYY-MM-DD', DATETIME/TIMESTAMP as
// 'YYYY-MM-DD HH:MM:SS' plus '.ffffff' when the microseconds are not 0, TIME
// as '[-]HH:MM:SS[.ffffff]'. The kind follows the value (decoders make
// unsigned types uint64_t); `t` only decides DATE vs DATETIME rendering.
// kProtocolValue for LongDataValue: substitute the long data first.
DecodeResult<ParamDescription> describeParam(const BinaryValue& v, BinaryType t);

}  // namespace sp::protocol
