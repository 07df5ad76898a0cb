// Role changes of replication groups across a fleet (issue 29, part 6;
// docs/availability.md "In a fleet"), as kept in etcd under the fleet's
// prefix, JSON values:
//   ha/topology        every group's roles in force (FleetTopologyRecord); put
//                      with a compare on its revision, so two changes never
//                      both land
//   ha/change          the role change running now (RoleChangeRecord), under
//                      the deciding proxy's lease: created only when absent
//                      (one change at a time in the fleet), gone when the
//                      change ends or its proxy dies
//   ha/ack/<proxy>     "<change's create revision>": that proxy holds the
//                      group's statements (and, for a switchover, has none in
//                      flight), under its own lease
//   ha/leader          the proxy that decides automatic failovers, under its
//                      lease (created only when absent: an election, not a race)
// All of them sort between fence/ and map, inside the range every proxy
// watches already. Pure: keys, encoding and decoding only.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coord {

struct RoleGroupRecord {
  std::string backend;
  std::string primary;
  std::vector<std::string> replicas;
  std::vector<std::string> fenced;
  std::string promoted_at;
  int64_t changed_unix_ms = 0;
  std::string change;
  bool operator==(const RoleGroupRecord&) const = default;
};

struct FleetTopologyRecord {
  uint64_t version = 0;       // bumped by every change published
  std::string published_by;   // the proxy that made the change
  std::vector<RoleGroupRecord> groups;
};

struct RoleChangeRecord {
  std::string backend;
  std::string kind;   // "switchover" | "failover" | "rejoin"
  std::string proxy;  // the deciding proxy
  std::string who;    // "admin:root", "auto_failover"
  uint32_t hold_ms = 0;  // how long the other proxies hold the group's statements at most
};

std::string haPrefix(std::string_view prefix);  // "<prefix>/ha/"
std::string haTopologyKey(std::string_view prefix);
std::string haChangeKey(std::string_view prefix);
std::string haLeaderKey(std::string_view prefix);
std::string haAckPrefix(std::string_view prefix);
std::string haAckKey(std::string_view prefix, std::string_view proxy);

// A key under ha/, as a watcher sees it.
struct HaKeyRef {
  enum class Kind : uint8_t { kTopology, kChange, kLeader, kAck };
  Kind kind = Kind::kTopology;
  std::string proxy;  // kAck: whose
};
std::optional<HaKeyRef> parseHaKey(std::string_view prefix, std::string_view key);

std::string encodeFleetTopology(const FleetTopologyRecord& record);
// Errors name what is wrong; a group without backend or primary is one.
std::expected<FleetTopologyRecord, std::string> decodeFleetTopology(std::string_view json);
std::string encodeRoleChange(const RoleChangeRecord& record);
std::expected<RoleChangeRecord, std::string> decodeRoleChange(std::string_view json);

}  // namespace sp::coord
