// Online moves of rows between shards (docs/operations.md, issue 17): what an
// admin's MOVE BUCKET / MOVE KEY / MOVE SHARD means against the map in force,
// which rows move (as an SQL predicate for the copy and verify queries, and
// as a key predicate for the write hold and the binlog catch-up), and the
// shard map after the move (YAML text, version + 1), compiled later with the
// same validation as RELOAD SHARD MAP. Pure: no sockets, no logging.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/map/shard_map.hpp"

namespace sp::routing {

enum class MoveKind : uint8_t {
  kBuckets,  // MOVE BUCKET 17[,18..] OF <bucket table> TO <shard>
  kKey,      // MOVE KEY 42 OF <bucket table> TO <shard>: pinned there with hot_keys
  kShard,    // MOVE SHARD 5 OF <mod table> TO <backend>: the physical table to another backend
};

struct MoveRequest {
  MoveKind kind = MoveKind::kBuckets;
  std::string table;             // logical table
  std::vector<uint32_t> buckets; // kBuckets, ascending, unique
  uint64_t key = 0;              // kKey
  uint32_t shard = 0;            // kShard: the mod shard index
  std::string target;            // shard name (kBuckets, kKey) or backend name (kShard)
};

// "bucket 17,18 of tg_channel_message to s03", the command's meaning in one line.
std::string describeMove(const MoveRequest& request);
// "bucket", "key", "shard": how a kind is written in the SQLite file and in a fleet's fence.
std::string_view moveKindName(MoveKind kind);
std::optional<MoveKind> moveKindFrom(std::string_view name);

// Error codes of the move commands (docs/admin.md, "Online moves").
namespace move_error {
inline constexpr uint16_t kInvalid = 9130;       // unknown table, shard, backend, bucket; wrong method
inline constexpr uint16_t kAlreadyThere = 9131;  // nothing would move
inline constexpr uint16_t kConflict = 9132;      // a move on the same table's keys is not finished
inline constexpr uint16_t kUnknownMove = 9133;   // CANCEL / CLEANUP of an id that does not exist
inline constexpr uint16_t kWrongState = 9134;    // CANCEL after the switch, CLEANUP before a verified one
inline constexpr uint16_t kHoldTimeout = 9135;   // a write waited for a cut-over longer than moves.hold_timeout_ms
inline constexpr uint16_t kHoldFull = 9136;      // more writes waiting than moves.hold_max_waiting
inline constexpr uint16_t kNoStore = 9137;       // moves need the SQLite file (`cache:`)
// A fleet fence holds the keys and this proxy lost etcd (fleet_fences.hpp); retryable.
inline constexpr uint16_t kFleetUnsynchronised = 9138;
}  // namespace move_error

struct MoveRefusal {
  uint16_t code = move_error::kInvalid;
  std::string message;
};

// Which keys of a table move: decided without the map (maps are replaced
// while a move runs), so the write hold and the catch-up can test a key.
struct MovingKeys {
  std::string table;                  // logical
  MoveKind kind = MoveKind::kBuckets;
  std::vector<uint32_t> buckets;      // kBuckets, ascending
  uint32_t bucket_count = 0;
  uint32_t prefix_crc = 0;
  std::vector<uint64_t> staying_keys; // kBuckets: the table's hot keys (they never move with a bucket), ascending
  uint64_t key = 0;                   // kKey
  uint32_t shard = 0;                 // kShard
  uint32_t shard_count = 0;           // kShard

  bool contains(uint64_t key_value) const;
};

struct MovePlan {
  MoveRequest request;
  std::string key_column;
  std::string source_shard, source_backend, source_table;
  std::string target_shard, target_backend, target_table;
  // The moving rows of the source table, for WHERE: empty = every row (kShard).
  std::string row_predicate;
  MovingKeys keys;
  uint64_t new_version = 0;
  std::string new_map_yaml;           // the map after the move
};

// Resolves `request` against the map in force; refusals carry move_error codes.
std::expected<MovePlan, MoveRefusal> planMove(const CompiledShardMap& map, const MoveRequest& request,
                                              const std::vector<std::string>& backend_names);

// YAML for a compiled map (every key of docs/shard-map.md), with `version`.
std::string renderShardMapYaml(const std::vector<TableRule>& tables, uint64_t version);

}  // namespace sp::routing
