// MariaDB GTID positions ("domain-server-seq", comma-separated lists as in
// @@gtid_current_pos): read-your-writes compares a session's last write with
// a replica's position.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace sp::proxy {

struct Gtid {
  uint32_t domain = 0;
  uint32_t server = 0;
  uint64_t seq = 0;
};

// One "d-s-n"; nullopt when malformed.
std::optional<Gtid> parseGtid(std::string_view text);
// Whether a server at `position` (a list, one entry per domain) has applied
// `gtid`: its domain's entry has a sequence number at least as high. A
// malformed position covers nothing.
bool positionCovers(std::string_view position, const Gtid& gtid);

}  // namespace sp::proxy
