// The shard map (docs/shard-map.md): which logical tables are sharded, by which
// key, into which physical tables on which backends. Read from YAML once (in
// conf/), validated completely (every problem reported, with key path and line), then
// compiled into an immutable object shared as std::shared_ptr<const
// CompiledShardMap>: a statement plans against one snapshot while a reload
// publishes the next.
#pragma once
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "conf/shard_map_file.hpp"

namespace sp::routing {

enum class ShardMethod : uint8_t {
  kMod,     // shard index = key % shards
  kBucket,  // bucket = CRC32(key_prefix + decimal(key)) % buckets; shard = owner of the bucket
};

// What a statement without the shard key may do (enforced by the planner).
enum class ScatterPolicy : uint8_t {
  kDeny,        // refused
  kAggregates,  // SELECTs whose select list is aggregates may fan out
  kAllow,       // any SELECT may fan out
};

std::string_view toString(ShardMethod method);
std::string_view toString(ScatterPolicy policy);

// Month partitioning of a table (tg_channel_message): `column` is a DATE that
// holds the first day of the month of `time_column`.
struct MonthRule {
  std::string column;       // e.g. message_month
  std::string time_column;  // e.g. message_time; empty when not configured
  uint32_t max_span_months = 12;
};

// An inclusive range of bucket numbers.
struct BucketRange {
  uint32_t first = 0;
  uint32_t last = 0;
};

struct Shard {
  uint32_t index = 0;          // position in TableRule::shards
  std::string name;            // the text substituted for {shard}: "07" (msg), "s02" (tg)
  std::string physical_table;  // e.g. msg_07, tg_channel_message_s02
  std::string backend;         // backend name from the proxy config
  std::vector<BucketRange> buckets;  // bucket tables: the buckets this shard owns, ascending
  std::string archive_table;   // cold rows of this shard (msg_archive_07); empty without `archive`
  std::string backfill_table;  // writes into dropped months (tg_channel_message_backfill_s02); empty without `backfill`
};

struct TableRule {
  std::string name;            // logical table name as written in the map
  std::string key;             // shard key column
  ShardMethod method = ShardMethod::kMod;
  ScatterPolicy scatter = ScatterPolicy::kDeny;
  std::string table_template;  // e.g. "msg_{shard:02}"
  std::vector<Shard> shards;   // mod: index i holds key % shards == i; bucket: sorted by name
  // Bucket tables only:
  std::string key_prefix;                  // e.g. "channel:"
  uint32_t bucket_count = 0;               // e.g. 64
  std::vector<uint32_t> bucket_to_shard;   // bucket -> index into shards
  std::vector<std::pair<uint64_t, uint32_t>> hot_keys;  // key -> shard index, sorted by key
  uint32_t prefix_crc = 0;                 // crc32(key_prefix), precomputed
  std::optional<MonthRule> month;
  // `archive: {table: ...}`: the template of the cold tables (storage design,
  // "归档与冷热分层"); routed SELECTs read hot and cold together. Empty: none.
  std::string archive_template;
  std::string archive_time_column = "created_at";  // ARCHIVE ... OLDER THAN compares this column
  // The per-key order column (msg.seq): each key's archived rows lie below its
  // lowest hot value, so a read starting at or above it skips the archive.
  std::string archive_seq_column = "seq";  // empty: no guard (the backfill read view)
  // `backfill: {table: ...}` (month tables): the template of the tables that
  // take rows of months ARCHIVE ... BEFORE dropped. Empty: none (9122).
  std::string backfill_template;

  // Bucket of a key (bucket tables; 0 for mod tables). Hot keys do not change it.
  uint32_t bucketOf(uint64_t key) const;
  // The shard that holds rows with this key value (hot keys first for bucket tables).
  uint32_t shardIndexOf(uint64_t key) const;
  const Shard& shardOf(uint64_t key) const { return shards[shardIndexOf(key)]; }
  const Shard* findShard(std::string_view shard_name) const;
};

// A physical table named directly in SQL, e.g. msg_07.
struct PhysicalTableRef {
  const TableRule* table = nullptr;
  const Shard* shard = nullptr;
};

class CompiledShardMap {
 public:
  uint64_t version() const { return version_; }
  // SHA-256 (lower-case hex) of canonicalText(): equal for maps that mean the
  // same thing, whatever their comments, key order or formatting.
  const std::string& checksum() const { return checksum_; }
  // A deterministic, line-oriented rendering of the compiled map.
  const std::string& canonicalText() const { return canonical_text_; }
  // The YAML exactly as loaded (for the SQLite cache and SHOW SHARD MAP).
  const std::string& sourceText() const { return source_text_; }
  // Sorted by logical name.
  const std::vector<TableRule>& tables() const { return tables_; }

  // Logical table by name: exact match, else ASCII case-insensitive match
  // (validation guarantees names are unique ignoring case). nullptr: unsharded.
  const TableRule* findTable(std::string_view logical_name) const;
  // Physical table by name, same matching rules.
  std::optional<PhysicalTableRef> findPhysical(std::string_view physical_name) const;
  // Every backend some shard lives on, sorted, unique.
  std::vector<std::string> referencedBackends() const;

  // Tables with `backfill:` seen through their backfill tables, planned for
  // statements on dropped months (proxy/lifecycle/archived_months.hpp): `writes` routes
  // to the backfill table instead of the month table; the reads view reads
  // both as one derived table (the archive union without its guard). Null
  // when no table has `backfill:`.
  const CompiledShardMap* backfillView(bool writes) const {
    return writes ? backfill_writes_.get() : backfill_reads_.get();
  }

  struct Parts;  // construction input, filled by the compiler (shard_map_compile.cpp)
  explicit CompiledShardMap(Parts&& parts);

 private:
  struct CaseInsensitiveHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const;
  };
  struct CaseInsensitiveEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const;
  };
  using NameIndex = std::unordered_map<std::string, std::pair<uint32_t, uint32_t>,
                                       CaseInsensitiveHash, CaseInsensitiveEqual>;

  uint64_t version_ = 0;
  std::string checksum_;
  std::string canonical_text_;
  std::string source_text_;
  std::vector<TableRule> tables_;
  NameIndex logical_index_;   // name -> (table, unused)
  NameIndex physical_index_;  // name -> (table, shard)
  std::shared_ptr<const CompiledShardMap> backfill_writes_;
  std::shared_ptr<const CompiledShardMap> backfill_reads_;
};

struct CompiledShardMap::Parts {
  uint64_t version = 0;
  std::string source_text;
  std::vector<TableRule> tables;
  bool view = false;  // a backfill view (builds no views of its own)
};

// One problem in a shard map: key path ("tables.msg.backends.db3"), 1-based
// line (0 when unknown) and what is wrong. The same shape as the config's
// issues: the file is read in conf/ (conf/shard_map_file.hpp).
using ShardMapIssue = conf::ConfigIssue;
using ShardMapIssues = conf::ConfigIssues;
using ShardMapResult = std::expected<std::shared_ptr<const CompiledShardMap>, ShardMapIssues>;

// Validates and compiles a shard-map file read by conf::readShardMapText
// (whose issues come in `issues`; `source_text` is kept for SHOW SHARD MAP and
// the cache). `backend_names` are the backends defined in the proxy config;
// every backend the map references must be one of them. Reports every problem
// found, not only the first, in file order.
ShardMapResult compileShardMap(const conf::ShardMapFile& file, std::string source_text,
                               std::span<const std::string> backend_names, ShardMapIssues issues = {});
// Reads (conf::readShardMapText) and compiles YAML text.
ShardMapResult compileShardMap(std::string_view yaml_text, std::span<const std::string> backend_names);
// Same, reading the file first (a read failure is one issue with path "").
ShardMapResult loadShardMap(const std::string& file_path, std::span<const std::string> backend_names);
// "file:line: path: message" lines, one per issue.
std::string formatShardMapIssues(const ShardMapIssues& issues, std::string_view file_name);

}  // namespace sp::routing
