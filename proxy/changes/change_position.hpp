// The resumable position of a change stream: for every backend, the GTID of
// the last transaction of its binary log that the stream has passed (one
// entry per replication domain). A consumer that saves the position of the
// last change of a transaction and reconnects with it gets the next
// transaction of every backend: nothing lost, nothing twice. GTIDs are the
// same on a backend's primary and its replicas, so a position survives a
// failover and a switch between the servers read.
//
// Text form (URL-safe, no escaping needed):
//   db0:0-3307-1234,db1:0-3308-77_1-5-3
// backends separated by ',', each "name:" then its domains' GTIDs separated
// by '_' ("name:" alone: nothing read yet, start at the beginning of its
// binary log). Pure: no I/O.
#pragma once
#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <string_view>

namespace sp::proxy::changes {

struct StreamGtid {
  uint32_t domain = 0;
  uint32_t server = 0;
  uint64_t seq = 0;
  bool operator==(const StreamGtid&) const = default;
};

// The GTIDs of one backend, by domain.
struct BackendGtids {
  std::map<uint32_t, StreamGtid> by_domain;
  void advance(const StreamGtid& g) { by_domain[g.domain] = g; }
  // Whether the transaction `g` is at or before this state (its domain's
  // sequence number is at least g's).
  bool covers(const StreamGtid& g) const;
  // "0-1-5,1-2-3": @@slave_connect_state's form.
  std::string connectState() const;
  bool operator==(const BackendGtids&) const = default;
};

struct ChangePosition {
  std::map<std::string, BackendGtids> backends;
  bool operator==(const ChangePosition&) const = default;
};

// Bounds of a position from a client: longer texts and more entries are refused.
inline constexpr size_t kMaxPositionBytes = 4096;
inline constexpr size_t kMaxPositionBackends = 64;
inline constexpr size_t kMaxPositionDomains = 16;

std::string encodePosition(const ChangePosition& position);
// Refuses (with what is wrong and where) anything encodePosition would not
// write: empty names, bad characters, numbers out of range, a backend or a
// domain twice, too long.
std::expected<ChangePosition, std::string> parsePosition(std::string_view text);
// "d-s-n" of @@gtid_binlog_pos / @@last_gtid (strict: digits only).
std::expected<StreamGtid, std::string> parseStreamGtid(std::string_view text);
std::string formatGtid(const StreamGtid& g);
// A backend's @@gtid_binlog_pos ("0-1-5,1-2-3", may be empty).
std::expected<BackendGtids, std::string> parseGtidList(std::string_view text);

}  // namespace sp::proxy::changes
