// CRC-32 as defined by IEEE 802.3 (reflected, polynomial 0xEDB88320, initial
// value and final xor 0xFFFFFFFF): the same function as MySQL/MariaDB CRC32()
// and Python's zlib.crc32, so a DBA can recompute any routing decision in SQL:
//   SELECT CRC32(CONCAT('channel:', peer_id)) % 64;
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sp::routing {

// Continues a CRC over more bytes. `crc` is a finished CRC of the bytes before
// (0 for none), exactly like zlib's crc32(crc, buf, len), so
// crc32Update(crc32(a), b) == crc32(a + b).
uint32_t crc32Update(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32(std::string_view data) {
  return crc32Update(0, data.data(), data.size());
}

// Writes the decimal form of `value` (no sign, no leading zeros) into `out`,
// which must hold 20 bytes; returns the number of characters written.
size_t formatDecimal(uint64_t value, char* out);

// CRC of prefix + decimal(key), the bucket hash of `method: bucket` tables.
// `prefix_crc` is crc32(prefix), computed once per table.
inline uint32_t crc32OfPrefixedKey(uint32_t prefix_crc, uint64_t key) {
  char digits[20];
  size_t n = formatDecimal(key, digits);
  return crc32Update(prefix_crc, digits, n);
}

}  // namespace sp::routing
