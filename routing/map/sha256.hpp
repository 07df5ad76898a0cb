// SHA-256 (FIPS 180-4), used for the shard-map checksum. Kept here so routing/
// does not depend on OpenSSL; it runs once per map load, never per query.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sp::routing {

std::array<uint8_t, 32> sha256(std::string_view data);
// Lower-case hex of sha256(data), 64 characters (what `sha256sum` prints).
std::string sha256Hex(std::string_view data);

}  // namespace sp::routing
