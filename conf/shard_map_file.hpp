// The shard-map file (docs/shard-map.md) as read: its YAML checked for shape
// (types, known keys, required keys, integer ranges, fixed choices) and turned
// into plain values that keep their line numbers. What the values mean (shard
// and bucket coverage, backends, templates, names) is checked by
// routing::compileShardMap, which reports against the same lines.
// Every problem is reported, not only the first; yaml-cpp stays out of this header.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config_issue.hpp"

namespace sp::conf {

// A scalar of the file and the 1-based line it is on (0: unknown).
struct SourceText {
  std::string text;
  int line = 0;
};

enum class ShardMapMethod : uint8_t { kMod, kBucket };

struct ShardMapFile {
  // "backend: ranges" of a mod table, or a hot key's "key: shard".
  struct Pair {
    SourceText key;                   // line of the key
    std::optional<SourceText> value;  // absent when it was not a string (reported)
  };
  struct BucketShard {
    SourceText name;                     // line of the key
    int line = 0;                        // line of its mapping
    bool readable = false;               // its value is a mapping
    std::optional<SourceText> backend;   // absent when missing or not a string (reported)
    std::optional<SourceText> buckets;
  };
  struct Month {
    int line = 0;  // line of the month mapping
    bool complete = true;  // every key present was read (else reported)
    std::optional<SourceText> column;
    std::optional<SourceText> time_column;
    std::optional<uint32_t> max_span_months;
  };
  // `archive: {table: ..., time_column: ..., seq_column: ...}`: the cold tables of each shard.
  struct Archive {
    int key_line = 0;       // line of the `archive` key
    bool complete = true;   // every key present was read (else reported)
    std::optional<SourceText> table;        // the cold table's name template; absent: not given (reported)
    std::optional<SourceText> time_column;
    std::optional<SourceText> seq_column;
  };
  struct Table {
    SourceText name;        // line of the key
    bool readable = false;  // its value is a mapping
    std::optional<SourceText> key;
    std::optional<ShardMapMethod> method;  // absent when missing or invalid (reported)
    std::optional<std::string> scatter;    // "deny", "aggregates" or "allow"
    std::optional<SourceText> table;       // the physical name template
    std::optional<Month> month;
    std::optional<Archive> archive;        // read for a valid `method` only
    std::optional<Archive> backfill;       // `backfill: {table: ...}` (month tables; only `table` is read)
    // Mod tables:
    std::optional<uint64_t> shards;        // the count (1-4096)
    bool backends_present = false;         // the key exists and holds a mapping
    int backends_line = 0;                 // line of the `backends` key
    std::vector<Pair> backends;            // backend name -> shard ranges
    // Bucket tables:
    std::optional<std::string> key_prefix;
    std::optional<uint64_t> buckets;       // the count (1-65536)
    bool shards_present = false;           // `shards` exists and holds a mapping
    int shards_key_line = 0;
    int shards_value_line = 0;
    std::vector<BucketShard> bucket_shards;  // in file order
    std::vector<Pair> hot_keys;              // key text -> shard name
  };

  std::optional<uint64_t> version;
  std::vector<Table> tables;  // in file order
};

inline constexpr uint64_t kMaxModShards = 4096;
inline constexpr uint64_t kMaxShardMapBuckets = 65536;
inline constexpr uint64_t kMaxSpanMonths = 1200;

// Reads the text of a shard-map file. Problems go to `issues` (path, line,
// message); the result holds whatever could be read, for the compiler to
// check further. A YAML syntax error or an empty document leaves it empty.
ShardMapFile readShardMapText(std::string_view yaml_text, ConfigIssues& issues);
// The same, reading the file first; `text` receives its content (a read
// failure is one issue with path "" and an empty result).
ShardMapFile readShardMapFile(const std::string& path, std::string& text, ConfigIssues& issues);

}  // namespace sp::conf
