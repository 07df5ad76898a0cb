// Binary result-set rows (the rows of a COM_STMT_EXECUTE / COM_STMT_FETCH
// answer): int<1> 0x00 header, NULL bitmap of (column_count + 7 + 2) / 8 bytes
// whose bit i + 2 marks column i NULL, then the value of each non-NULL column
// encoded per its type (see binary_value.hpp).
#pragma once
#include <span>
#include <vector>

#include "protocol/binary_value.hpp"
#include "protocol/resultset.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

using BinaryRow = std::vector<BinaryValue>;

// The per-column types of a result set, from its column definitions.
std::vector<BinaryType> binaryTypesOf(std::span<const ColumnDefinition41> columns);

// String-like values view `payload`. Strict: the header must be 0x00, the two
// reserved bitmap bits and the bits after the last column must be 0, and the
// payload must end after the last value.
DecodeResult<BinaryRow> decodeBinaryRow(ByteView payload, std::span<const BinaryType> types);

// values.size() must equal types.size(); a value that does not fit its type
// (or LongDataValue) is kProtocolValue, with nothing appended.
EncodeResult encodeBinaryRow(std::span<const BinaryValue> values, std::span<const BinaryType> types,
                             Bytes& out);

}  // namespace sp::protocol
