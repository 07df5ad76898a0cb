// Internal to protocol/binlog_rows.cpp (and its tests): one column value of a
// row image, read from its binlog storage format (what the storage engine
// keeps, not the client protocol's format).
#pragma once
#include <cstdint>

#include "protocol/binlog_rows.hpp"
#include "protocol/wire.hpp"

namespace sp::protocol {

// `meta` as decodeTableMap stores it for the type (binlog_rows.cpp).
DecodeResult<BinlogValue> readBinlogValue(Reader& r, uint8_t type, uint16_t meta, bool is_unsigned);

}  // namespace sp::protocol
