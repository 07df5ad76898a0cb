// MariaDB GTID positions ("domain-server-seq", comma-separated lists as in
// @@gtid_current_pos): read-your-writes compares a session's last write with
// a replica's position.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

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

// Every entry of a position list; nullopt when any entry is malformed.
std::optional<std::vector<Gtid>> parsePosition(std::string_view position);
// Whether `position` has applied everything `other` has (every domain of
// `other` covered). Malformed lists cover nothing and are covered by nothing.
bool positionCoversAll(std::string_view position, std::string_view other);
// The transactions of `other` that `position` lacks, summed over domains
// (0 when it covers them all; nullopt when either list is malformed): how
// many acknowledged writes a promotion of `position`'s server would lose
// when `other` was the old primary's last known position.
std::optional<uint64_t> positionShortfall(std::string_view position, std::string_view other);

}  // namespace sp::proxy
