// What a fleet of proxies keeps in etcd under its prefix (docs/operations.md,
// "Fleets"), as JSON values:
//   <prefix>/map                the map every proxy serves (PublishedMap)
//   <prefix>/proxies/<name>     one per live proxy, under its lease (MemberRecord)
// Pure: encoding and decoding only.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace sp::coord {

struct PublishedMap {
  uint64_t version = 0;
  std::string checksum;
  std::string source;        // the YAML text, as the publishing proxy validated it
  std::string published_by;  // "<proxy name> admin:<user>"
  std::string note;          // "reload", "rollback to 3", "first map of the fleet"
};

struct MemberRecord {
  std::string name;
  std::string admin;         // the proxy's admin address, "127.0.0.1:6034" ("-" when off)
  uint64_t version = 0;      // the map it serves
  std::string checksum;
  std::string applied_at;    // UTC with milliseconds, "2026-11-30T10:21:07.123Z"
  int64_t map_revision = 0;  // etcd mod_revision of <prefix>/map it applied (0: its own map, not yet the fleet's)
};

std::string mapKey(std::string_view prefix);
std::string membersPrefix(std::string_view prefix);
std::string memberKey(std::string_view prefix, std::string_view name);

std::string encodePublishedMap(const PublishedMap& map);
std::expected<PublishedMap, std::string> decodePublishedMap(std::string_view json);
std::string encodeMemberRecord(const MemberRecord& member);
std::expected<MemberRecord, std::string> decodeMemberRecord(std::string_view json);

}  // namespace sp::coord
