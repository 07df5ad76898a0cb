// A bound parameter of the binary protocol written as the SQL literal that
// makes the server evaluate the same value: what a prepared statement that
// spans shards needs, since its shard queries run as text (the merge works on
// text rows). Each type maps to the literal the server types the same way:
// integers as integers, DOUBLE/FLOAT as an exponent literal (a DOUBLE, not a
// DECIMAL), DECIMAL as its digits, dates and times as DATE'..'/TIMESTAMP'..'/
// TIME'..', character strings as quoted strings in the client's character set,
// BLOB-typed parameters as X'..' binary strings (the server binds those as
// binary), NULL as NULL.
#pragma once
#include <expected>
#include <string>

#include "protocol/binary_value.hpp"

namespace sp::protocol {

struct SqlLiteralOptions {
  // false under sql_mode NO_BACKSLASH_ESCAPES: only quotes are doubled.
  bool backslash_escapes = true;
};

// The literal, or why the value has none (NaN and infinities, a DECIMAL that
// is not a plain decimal number, LongDataValue: substitute the long data first).
std::expected<std::string, std::string> sqlLiteral(const BinaryValue& v, BinaryType t,
                                                   const SqlLiteralOptions& options = {});

// X'..': the bytes as a binary string literal (no quoting or character-set
// question; assigned to a text column the bytes are taken as they are).
std::string hexLiteral(std::string_view bytes);

// Character sets whose multi-byte characters may contain the bytes of a quote
// or a backslash (big5, cp932, gbk, gb18030, sjis): escaping bytes one by one
// is not safe in them.
bool quotingUnsafeCharset(std::string_view charset);

}  // namespace sp::protocol
