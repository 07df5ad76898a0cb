// Compiled shard map: lookups and the canonical rendering behind the checksum.
// Validation lives in shard_map_compile.cpp; the file is read in conf/shard_map_file.cpp.
#include "routing/map/shard_map.hpp"

#include <algorithm>
#include <sstream>

#include "routing/map/bucket_ranges.hpp"
#include "routing/map/crc32.hpp"
#include "routing/map/sha256.hpp"

namespace sp::routing {
namespace {

char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

// Quotes a string so the canonical text is unambiguous whatever it contains.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string renderTable(const TableRule& t) {
  std::ostringstream out;
  out << "table " << quoted(t.name) << " key=" << quoted(t.key) << " method=" << toString(t.method)
      << " template=" << quoted(t.table_template) << " scatter=" << toString(t.scatter);
  if (t.method == ShardMethod::kBucket) {
    out << " key_prefix=" << quoted(t.key_prefix) << " buckets=" << t.bucket_count;
  } else {
    out << " shards=" << t.shards.size();
  }
  if (t.month) {
    out << " month=" << quoted(t.month->column) << ',' << quoted(t.month->time_column) << ','
        << t.month->max_span_months;
  }
  if (!t.archive_template.empty()) {
    out << " archive=" << quoted(t.archive_template) << ',' << quoted(t.archive_time_column) << ','
        << quoted(t.archive_seq_column);
  }
  if (!t.backfill_template.empty()) out << " backfill=" << quoted(t.backfill_template);
  out << '\n';
  for (const auto& s : t.shards) {
    out << "  shard " << quoted(s.name) << " table=" << quoted(s.physical_table)
        << " backend=" << quoted(s.backend);
    if (t.method == ShardMethod::kBucket) out << " buckets=" << renderRanges(s.buckets);
    if (!s.archive_table.empty()) out << " archive=" << quoted(s.archive_table);
    if (!s.backfill_table.empty()) out << " backfill=" << quoted(s.backfill_table);
    out << '\n';
  }
  for (const auto& [key, shard] : t.hot_keys) {
    out << "  hot_key " << key << " shard=" << quoted(t.shards[shard].name) << '\n';
  }
  return out.str();
}

}  // namespace

std::string renderRanges(const std::vector<BucketRange>& ranges) {
  std::string out;
  for (const auto& r : ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first);
    if (r.last != r.first) out += '-' + std::to_string(r.last);
  }
  return out;
}

std::string_view toString(ShardMethod method) {
  return method == ShardMethod::kMod ? "mod" : "bucket";
}

std::string_view toString(ScatterPolicy policy) {
  switch (policy) {
    case ScatterPolicy::kDeny: return "deny";
    case ScatterPolicy::kAggregates: return "aggregates";
    case ScatterPolicy::kAllow: return "allow";
  }
  return "deny";
}

uint32_t TableRule::bucketOf(uint64_t key) const {
  if (method != ShardMethod::kBucket || bucket_count == 0) return 0;
  return crc32OfPrefixedKey(prefix_crc, key) % bucket_count;
}

uint32_t TableRule::shardIndexOf(uint64_t key) const {
  if (method == ShardMethod::kMod) return static_cast<uint32_t>(key % shards.size());
  if (!hot_keys.empty()) {
    auto it = std::lower_bound(hot_keys.begin(), hot_keys.end(), key,
                               [](const auto& entry, uint64_t k) { return entry.first < k; });
    if (it != hot_keys.end() && it->first == key) return it->second;
  }
  return bucket_to_shard[bucketOf(key)];
}

const Shard* TableRule::findShard(std::string_view shard_name) const {
  for (const auto& s : shards) {
    if (s.name == shard_name) return &s;
  }
  return nullptr;
}

size_t CompiledShardMap::CaseInsensitiveHash::operator()(std::string_view s) const {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over lower-cased bytes
  for (char c : s) {
    h ^= static_cast<unsigned char>(lowerAscii(c));
    h *= 0x100000001b3ull;
  }
  return static_cast<size_t>(h);
}

bool CompiledShardMap::CaseInsensitiveEqual::operator()(std::string_view a, std::string_view b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lowerAscii(a[i]) != lowerAscii(b[i])) return false;
  }
  return true;
}

CompiledShardMap::CompiledShardMap(Parts&& parts)
    : version_(parts.version), source_text_(std::move(parts.source_text)), tables_(std::move(parts.tables)) {
  std::sort(tables_.begin(), tables_.end(),
            [](const TableRule& a, const TableRule& b) { return a.name < b.name; });
  canonical_text_ = "shardmap version=" + std::to_string(version_) + '\n';
  for (uint32_t t = 0; t < tables_.size(); ++t) {
    TableRule& rule = tables_[t];
    rule.prefix_crc = crc32(rule.key_prefix);
    logical_index_.emplace(rule.name, std::pair{t, 0u});
    for (uint32_t s = 0; s < rule.shards.size(); ++s) {
      physical_index_.emplace(rule.shards[s].physical_table, std::pair{t, s});
    }
    canonical_text_ += renderTable(rule);
  }
  checksum_ = sha256Hex(canonical_text_);
  bool backfill = std::any_of(tables_.begin(), tables_.end(), [](const TableRule& t) { return !t.backfill_template.empty(); });
  if (parts.view || !backfill) return;
  Parts writes{version_, source_text_, tables_, true};
  Parts reads{version_, source_text_, tables_, true};
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t].backfill_template.empty()) continue;
    reads.tables[t].archive_template = tables_[t].backfill_template;
    reads.tables[t].archive_seq_column.clear();
    for (size_t i = 0; i < tables_[t].shards.size(); ++i) {
      writes.tables[t].shards[i].physical_table = tables_[t].shards[i].backfill_table;
      reads.tables[t].shards[i].archive_table = tables_[t].shards[i].backfill_table;
    }
  }
  backfill_writes_ = std::make_shared<const CompiledShardMap>(std::move(writes));
  backfill_reads_ = std::make_shared<const CompiledShardMap>(std::move(reads));
}

const TableRule* CompiledShardMap::findTable(std::string_view logical_name) const {
  auto it = logical_index_.find(logical_name);
  return it == logical_index_.end() ? nullptr : &tables_[it->second.first];
}

std::optional<PhysicalTableRef> CompiledShardMap::findPhysical(std::string_view physical_name) const {
  auto it = physical_index_.find(physical_name);
  if (it == physical_index_.end()) return std::nullopt;
  const TableRule& rule = tables_[it->second.first];
  return PhysicalTableRef{&rule, &rule.shards[it->second.second]};
}

std::vector<std::string> CompiledShardMap::referencedBackends() const {
  std::vector<std::string> out;
  for (const auto& t : tables_) {
    for (const auto& s : t.shards) out.push_back(s.backend);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ShardMapResult loadShardMap(const std::string& file_path, std::span<const std::string> backend_names) {
  ShardMapIssues issues;
  std::string text;
  conf::ShardMapFile file = conf::readShardMapFile(file_path, text, issues);
  if (!issues.empty() && text.empty()) return std::unexpected(std::move(issues));  // not read at all
  return compileShardMap(file, std::move(text), backend_names, std::move(issues));
}

std::string formatShardMapIssues(const ShardMapIssues& issues, std::string_view file_name) {
  std::string out;
  for (const auto& issue : issues) {
    out += file_name;
    out += ':';
    out += std::to_string(issue.line);
    out += ": ";
    if (!issue.path.empty()) {
      out += issue.path;
      out += ": ";
    }
    out += issue.message;
    out += '\n';
  }
  return out;
}

}  // namespace sp::routing
