// Shard-map YAML -> validated CompiledShardMap. Every check runs even after an
// earlier one failed, so one pass reports every problem (docs/shard-map.md).
#include <algorithm>
#include <charconv>
#include <map>

#include "routing/shard_map.hpp"
#include "routing/shard_map_yaml.hpp"

namespace sp::routing {
namespace {

using namespace detail;

constexpr std::string_view kTopKeys[] = {"version", "tables"};
constexpr std::string_view kTableKeys[] = {"key",    "method",     "shards",  "table",    "backends",
                                           "scatter", "key_prefix", "buckets", "hot_keys", "month",
                                           "archive"};
constexpr std::string_view kArchiveKeys[] = {"table", "time_column"};
constexpr std::string_view kModOnlyKeys[] = {"backends"};
constexpr std::string_view kBucketOnlyKeys[] = {"key_prefix", "buckets", "hot_keys"};
constexpr std::string_view kMonthKeys[] = {"column", "time_column", "max_span_months"};
constexpr std::string_view kBucketShardKeys[] = {"buckets", "backend"};
constexpr std::string_view kMethods[] = {"mod", "bucket"};
constexpr std::string_view kScatterPolicies[] = {"deny", "aggregates", "allow"};
constexpr uint64_t kMaxModShards = 4096;
constexpr uint64_t kMaxBuckets = 65536;
constexpr uint64_t kMaxSpanMonths = 1200;
constexpr int kUnowned = -1;

// "msg_{shard:02}" -> prefix "msg_", width 2, suffix "".
struct NameTemplate {
  std::string prefix;
  std::string suffix;
  int width = 0;  // zero-pad width for numeric shard names; 0 = none

  std::string expand(std::string_view shard_name) const {
    return prefix + std::string(shard_name) + suffix;
  }
  std::string numericName(uint32_t index) const {
    std::string digits = std::to_string(index);
    if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
    return digits;
  }
};

std::expected<NameTemplate, std::string> parseTemplate(std::string_view text) {
  size_t open = text.find('{');
  if (open == std::string_view::npos) return std::unexpected("has no {shard} placeholder");
  size_t close = text.find('}', open);
  if (close == std::string_view::npos) return std::unexpected("has an unclosed '{'");
  std::string_view rest = text.substr(close + 1);
  if (rest.find_first_of("{}") != std::string_view::npos || text.substr(0, open).find('}') != std::string_view::npos) {
    return std::unexpected("must contain exactly one {shard} placeholder and no other braces");
  }
  std::string_view spec = text.substr(open + 1, close - open - 1);
  NameTemplate tpl{std::string(text.substr(0, open)), std::string(rest), 0};
  if (spec == "shard") return tpl;
  bool padded = spec.size() == 9 && spec.starts_with("shard:0") && spec[7] >= '1' && spec[7] <= '9' &&
                spec[8] >= '0' && spec[8] <= '9';
  bool padded_one_digit = spec.size() == 8 && spec.starts_with("shard:0") && spec[7] >= '1' && spec[7] <= '9';
  if (padded_one_digit) {
    tpl.width = spec[7] - '0';
    return tpl;
  }
  if (padded) {
    tpl.width = (spec[7] - '0') * 10 + (spec[8] - '0');
    if (tpl.width <= 20) return tpl;
  }
  return std::unexpected("placeholder '{" + std::string(spec) + "}' is not {shard} or {shard:0N}");
}

bool isShardName(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "buckets" -> "bucket", for messages.
std::string singular(std::string_view plural) { return std::string(plural.substr(0, plural.size() - 1)); }

struct TableDraft {
  TableRule rule;
  int name_line = 0;
  int template_line = 0;
  int archive_line = 0;
  bool shards_complete = false;  // physical names are known
};

class Compiler {
 public:
  Compiler(ShardMapIssues& issues, std::span<const std::string> backends) : sink_(issues), backends_(backends) {}

  std::optional<uint64_t> parseRoot(const YAML::Node& root);
  std::vector<TableDraft> drafts;

 private:
  void parseTable(const MapEntry& entry, const std::string& path);
  void parseCommon(std::span<const MapEntry> entries, const std::string& path, TableRule& rule);
  void parseArchive(const MapEntry& entry, const std::string& path, TableDraft& draft);
  std::optional<MonthRule> parseMonth(const YAML::Node& node, const std::string& path);
  void parseModShards(std::span<const MapEntry> entries, const std::string& path, const NameTemplate* tpl,
                      TableDraft& draft);
  void parseBucketShards(std::span<const MapEntry> entries, const std::string& path, const NameTemplate* tpl,
                         TableDraft& draft);
  // Buckets claimed so far (-1: none) and the owners' names, for overlap messages.
  struct BucketOwners {
    std::vector<int> owner;
    std::vector<std::string> names;
  };
  Shard parseBucketShard(const MapEntry& entry, const std::string& path, const NameTemplate* tpl,
                         std::optional<uint64_t> buckets, BucketOwners& owners, bool& ok);
  void parseHotKeys(const YAML::Node& node, const std::string& path, TableRule& rule);
  bool checkBackend(const YAML::Node& node, const std::string& path, const std::string& name);
  void assign(std::vector<int>& owner, const std::vector<BucketRange>& ranges, int owner_id,
              const std::vector<std::string>& owner_names, const std::string& path, const YAML::Node& at,
              std::string_view unit);
  void reportUnassigned(const std::vector<int>& owner, const std::string& path, const YAML::Node& at,
                        std::string_view unit, std::string_view owner_kind);
  void reportMethodKeys(std::span<const MapEntry> entries, const std::string& path, ShardMethod method);

  IssueSink sink_;
  std::span<const std::string> backends_;
};

std::optional<uint64_t> Compiler::parseRoot(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) {
    sink_.add("", 0, "the shard map is empty (expected 'version' and 'tables')");
    return std::nullopt;
  }
  if (!expectMap(sink_, root, "")) return std::nullopt;
  auto entries = mapEntries(sink_, root, "");
  reportUnknownKeys(sink_, entries, "", kTopKeys);
  std::optional<uint64_t> version;
  if (const auto* v = findEntry(entries, "version")) {
    version = readUInt(sink_, v->value, "version", 1, UINT64_MAX);
  } else {
    sink_.add("version", root, "missing required key 'version' (a positive integer)");
  }
  const auto* tables = findEntry(entries, "tables");
  if (!tables) {
    sink_.add("tables", root, "missing required key 'tables'");
  } else if (!tables->value.IsNull() && expectMap(sink_, tables->value, "tables")) {
    for (const auto& entry : mapEntries(sink_, tables->value, "tables")) {
      parseTable(entry, joinPath("tables", entry.key));
    }
  }
  return version;
}

void Compiler::parseTable(const MapEntry& entry, const std::string& path) {
  TableDraft draft;
  draft.rule.name = entry.key;
  draft.name_line = lineOf(entry.key_node);
  if (!isIdentifier(entry.key)) {
    sink_.add(path, entry.key_node, "table name '" + entry.key + "' is not a plain SQL identifier");
  }
  if (!expectMap(sink_, entry.value, path)) return;
  auto entries = mapEntries(sink_, entry.value, path);
  reportUnknownKeys(sink_, entries, path, kTableKeys);
  parseCommon(entries, path, draft.rule);

  std::optional<std::string> method;
  if (const auto* m = findEntry(entries, "method")) {
    method = readChoice(sink_, m->value, joinPath(path, "method"), kMethods);
  } else {
    sink_.add(joinPath(path, "method"), entry.value, "missing required key 'method' (mod or bucket)");
  }
  std::optional<NameTemplate> tpl;
  if (const auto* t = findEntry(entries, "table")) {
    draft.template_line = lineOf(t->value);
    if (auto text = readString(sink_, t->value, joinPath(path, "table"))) {
      draft.rule.table_template = *text;
      auto parsed = parseTemplate(*text);
      if (parsed) tpl = std::move(*parsed);
      else sink_.add(joinPath(path, "table"), t->value, "template '" + *text + "' " + parsed.error());
    }
  } else {
    sink_.add(joinPath(path, "table"), entry.value, "missing required key 'table' (e.g. \"" + entry.key + "_{shard:02}\")");
  }
  if (!method) return;
  draft.rule.method = *method == "mod" ? ShardMethod::kMod : ShardMethod::kBucket;
  reportMethodKeys(entries, path, draft.rule.method);
  const NameTemplate* tpl_ptr = tpl ? &*tpl : nullptr;
  if (draft.rule.method == ShardMethod::kMod) parseModShards(entries, path, tpl_ptr, draft);
  else parseBucketShards(entries, path, tpl_ptr, draft);
  if (const auto* a = findEntry(entries, "archive")) parseArchive(*a, joinPath(path, "archive"), draft);
  drafts.push_back(std::move(draft));
}

// archive: {table: "msg_archive_{shard:02}"}: the cold table of each shard,
// on the shard's backend, named like the hot one.
void Compiler::parseArchive(const MapEntry& entry, const std::string& path, TableDraft& draft) {
  if (!expectMap(sink_, entry.value, path)) return;
  auto entries = mapEntries(sink_, entry.value, path);
  reportUnknownKeys(sink_, entries, path, kArchiveKeys);
  const auto* t = findEntry(entries, "table");
  if (!t) {
    sink_.add(joinPath(path, "table"), entry.value,
              "missing required key 'table' (e.g. \"" + draft.rule.name + "_archive_{shard:02}\")");
    return;
  }
  auto text = readString(sink_, t->value, joinPath(path, "table"));
  if (!text) return;
  auto tpl = parseTemplate(*text);
  if (!tpl) {
    sink_.add(joinPath(path, "table"), t->value, "template '" + *text + "' " + tpl.error());
    return;
  }
  if (draft.rule.method == ShardMethod::kBucket && tpl->width != 0) {
    sink_.add(joinPath(path, "table"), t->value, "bucket tables substitute the shard name: use {shard}, not {shard:0N}");
    return;
  }
  if (draft.rule.month) {
    sink_.add(path, entry.key_node, "a month-partitioned table is archived by dropping month partitions, not by an "
                                    "archive table: remove either 'month' or 'archive'");
    return;
  }
  if (const auto* tc = findEntry(entries, "time_column")) {
    auto column = readIdentifier(sink_, tc->value, joinPath(path, "time_column"));
    if (!column) return;
    draft.rule.archive_time_column = *column;
  }
  draft.rule.archive_template = *text;
  draft.archive_line = lineOf(t->value);
  if (!draft.shards_complete) return;
  for (auto& shard : draft.rule.shards) {
    shard.archive_table = draft.rule.method == ShardMethod::kMod ? tpl->expand(tpl->numericName(shard.index))
                                                                  : tpl->expand(shard.name);
  }
}

void Compiler::parseCommon(std::span<const MapEntry> entries, const std::string& path, TableRule& rule) {
  if (const auto* k = findEntry(entries, "key")) {
    if (auto key = readIdentifier(sink_, k->value, joinPath(path, "key"))) rule.key = *key;
  } else {
    sink_.add(joinPath(path, "key"), entries.empty() ? YAML::Node() : entries.front().key_node,
              "missing required key 'key' (the shard key column)");
  }
  if (const auto* s = findEntry(entries, "scatter")) {
    if (auto policy = readChoice(sink_, s->value, joinPath(path, "scatter"), kScatterPolicies)) {
      rule.scatter = *policy == "allow"        ? ScatterPolicy::kAllow
                     : *policy == "aggregates" ? ScatterPolicy::kAggregates
                                               : ScatterPolicy::kDeny;
    }
  }
  if (const auto* m = findEntry(entries, "month")) rule.month = parseMonth(m->value, joinPath(path, "month"));
}

std::optional<MonthRule> Compiler::parseMonth(const YAML::Node& node, const std::string& path) {
  if (!expectMap(sink_, node, path)) return std::nullopt;
  auto entries = mapEntries(sink_, node, path);
  reportUnknownKeys(sink_, entries, path, kMonthKeys);
  MonthRule month;
  bool ok = true;
  if (const auto* c = findEntry(entries, "column")) {
    auto column = readIdentifier(sink_, c->value, joinPath(path, "column"));
    ok = ok && column.has_value();
    if (column) month.column = *column;
  } else {
    sink_.add(joinPath(path, "column"), node, "missing required key 'column' (the DATE month column)");
    ok = false;
  }
  if (const auto* t = findEntry(entries, "time_column")) {
    auto column = readIdentifier(sink_, t->value, joinPath(path, "time_column"));
    ok = ok && column.has_value();
    if (column) month.time_column = *column;
  }
  if (const auto* s = findEntry(entries, "max_span_months")) {
    auto span = readUInt(sink_, s->value, joinPath(path, "max_span_months"), 1, kMaxSpanMonths);
    ok = ok && span.has_value();
    if (span) month.max_span_months = static_cast<uint32_t>(*span);
  }
  if (ok && month.column == month.time_column) {
    sink_.add(joinPath(path, "time_column"), node, "time_column must differ from column");
    ok = false;
  }
  return ok ? std::optional(month) : std::nullopt;
}

void Compiler::reportMethodKeys(std::span<const MapEntry> entries, const std::string& path, ShardMethod method) {
  std::span<const std::string_view> foreign = kModOnlyKeys;
  if (method == ShardMethod::kMod) foreign = kBucketOnlyKeys;
  for (std::string_view key : foreign) {
    if (const auto* e = findEntry(entries, key)) {
      sink_.add(joinPath(path, key), e->key_node,
                "'" + std::string(key) + "' is only valid for method: " +
                    (method == ShardMethod::kMod ? "bucket" : "mod"));
    }
  }
}

bool Compiler::checkBackend(const YAML::Node& node, const std::string& path, const std::string& name) {
  if (std::find(backends_.begin(), backends_.end(), name) != backends_.end()) return true;
  std::string known;
  for (const auto& b : backends_) known += (known.empty() ? "" : ", ") + b;
  sink_.add(path, node,
            "unknown backend '" + name + "' (backends in the proxy config: " + (known.empty() ? "none" : known) + ")");
  return false;
}

void Compiler::assign(std::vector<int>& owner, const std::vector<BucketRange>& ranges, int owner_id,
                      const std::vector<std::string>& owner_names, const std::string& path, const YAML::Node& at,
                      std::string_view unit) {
  std::map<int, std::vector<uint32_t>> overlaps;  // previous owner -> numbers
  for (const auto& r : ranges) {
    for (uint32_t n = r.first; n <= r.last; ++n) {
      if (owner[n] == owner_id) continue;  // listed twice for the same owner: harmless
      if (owner[n] != kUnowned) overlaps[owner[n]].push_back(n);
      else owner[n] = owner_id;
    }
  }
  for (auto& [previous, numbers] : overlaps) {
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    sink_.add(path, at,
              std::string(unit) + " " + compressNumbers(numbers) + " are also mapped to '" + owner_names[previous] +
                  "': each " + singular(unit) + " must be mapped exactly once");
  }
}

void Compiler::reportUnassigned(const std::vector<int>& owner, const std::string& path, const YAML::Node& at,
                                std::string_view unit, std::string_view owner_kind) {
  std::vector<uint32_t> missing;
  for (uint32_t n = 0; n < owner.size(); ++n) {
    if (owner[n] == kUnowned) missing.push_back(n);
  }
  if (missing.empty()) return;
  sink_.add(path, at,
            std::string(unit) + " " + compressNumbers(missing) + " are not mapped to any " + std::string(owner_kind) +
                ": each " + singular(unit) + " must be mapped exactly once");
}

void Compiler::parseModShards(std::span<const MapEntry> entries, const std::string& path, const NameTemplate* tpl,
                              TableDraft& draft) {
  TableRule& rule = draft.rule;
  std::optional<uint64_t> count;
  if (const auto* s = findEntry(entries, "shards")) {
    count = readUInt(sink_, s->value, joinPath(path, "shards"), 1, kMaxModShards);
  } else {
    sink_.add(joinPath(path, "shards"), YAML::Node(), "missing required key 'shards' (the number of shards)");
  }
  const auto* backends = findEntry(entries, "backends");
  if (!backends) {
    sink_.add(joinPath(path, "backends"), YAML::Node(),
              "missing required key 'backends' (backend name -> shard ranges, e.g. {db0: \"0-7\"})");
    return;
  }
  std::string backends_path = joinPath(path, "backends");
  if (!expectMap(sink_, backends->value, backends_path) || !count) return;
  std::vector<int> owner(*count, kUnowned);
  std::vector<std::string> names;
  for (const auto& entry : mapEntries(sink_, backends->value, backends_path)) {
    std::string entry_path = joinPath(backends_path, entry.key);
    checkBackend(entry.key_node, entry_path, entry.key);
    auto text = readString(sink_, entry.value, entry_path);
    if (!text) continue;
    auto ranges = parseRanges(*text, *count - 1);
    if (!ranges) {
      sink_.add(entry_path, entry.value, "shard list '" + *text + "': " + ranges.error());
      continue;
    }
    names.push_back(entry.key);
    assign(owner, *ranges, static_cast<int>(names.size() - 1), names, entry_path, entry.value, "shards");
  }
  reportUnassigned(owner, backends_path, backends->key_node, "shards", "backend");
  if (!tpl || std::find(owner.begin(), owner.end(), kUnowned) != owner.end()) return;
  for (uint32_t i = 0; i < *count; ++i) {
    std::string name = tpl->numericName(i);
    rule.shards.push_back({i, name, tpl->expand(name), names[owner[i]], {}});
  }
  draft.shards_complete = true;
}

Shard Compiler::parseBucketShard(const MapEntry& entry, const std::string& path, const NameTemplate* tpl,
                                 std::optional<uint64_t> buckets, BucketOwners& owners, bool& ok) {
  auto index = static_cast<uint32_t>(owners.names.size() - 1);
  Shard shard{index, entry.key, tpl ? tpl->expand(entry.key) : "", "", {}};
  if (!isShardName(entry.key)) {
    sink_.add(path, entry.key_node, "shard name '" + entry.key + "' must be 1-32 letters, digits or _");
    ok = false;
  }
  if (!expectMap(sink_, entry.value, path)) {
    ok = false;
    return shard;
  }
  auto fields = mapEntries(sink_, entry.value, path);
  reportUnknownKeys(sink_, fields, path, kBucketShardKeys);
  if (const auto* be = findEntry(fields, "backend")) {
    auto backend = readString(sink_, be->value, joinPath(path, "backend"));
    if (backend && checkBackend(be->value, joinPath(path, "backend"), *backend)) shard.backend = *backend;
    else ok = false;
  } else {
    sink_.add(joinPath(path, "backend"), entry.value, "missing required key 'backend'");
    ok = false;
  }
  const auto* bk = findEntry(fields, "buckets");
  if (!bk) {
    sink_.add(joinPath(path, "buckets"), entry.value, "missing required key 'buckets' (e.g. \"0-15\")");
    return shard;
  }
  auto text = readString(sink_, bk->value, joinPath(path, "buckets"));
  if (!text || !buckets) return shard;
  auto ranges = parseRanges(*text, *buckets - 1);
  if (!ranges) {
    sink_.add(joinPath(path, "buckets"), bk->value, "bucket list '" + *text + "': " + ranges.error());
    return shard;
  }
  assign(owners.owner, *ranges, static_cast<int>(index), owners.names, joinPath(path, "buckets"), bk->value, "buckets");
  return shard;
}

void Compiler::parseBucketShards(std::span<const MapEntry> entries, const std::string& path,
                                 const NameTemplate* tpl, TableDraft& draft) {
  TableRule& rule = draft.rule;
  if (tpl && tpl->width != 0) {
    sink_.add(joinPath(path, "table"), YAML::Node(),
              "bucket tables substitute the shard name: use {shard}, not {shard:0N}");
    tpl = nullptr;
  }
  if (const auto* p = findEntry(entries, "key_prefix")) {
    if (auto prefix = readString(sink_, p->value, joinPath(path, "key_prefix"))) rule.key_prefix = *prefix;
  }
  std::optional<uint64_t> buckets;
  if (const auto* b = findEntry(entries, "buckets")) {
    buckets = readUInt(sink_, b->value, joinPath(path, "buckets"), 1, kMaxBuckets);
  } else {
    sink_.add(joinPath(path, "buckets"), YAML::Node(), "missing required key 'buckets' (the number of virtual buckets)");
  }
  const auto* shards = findEntry(entries, "shards");
  std::string shards_path = joinPath(path, "shards");
  if (!shards) {
    sink_.add(shards_path, YAML::Node(),
              "missing required key 'shards' (shard name -> {buckets: \"a-b\", backend: name})");
    return;
  }
  if (!expectMap(sink_, shards->value, shards_path)) return;
  auto shard_entries = mapEntries(sink_, shards->value, shards_path);
  std::sort(shard_entries.begin(), shard_entries.end(),
            [](const MapEntry& a, const MapEntry& b) { return a.key < b.key; });
  BucketOwners owners{std::vector<int>(buckets.value_or(0), kUnowned), {}};
  bool ok = buckets.has_value();
  for (const auto& entry : shard_entries) {
    owners.names.push_back(entry.key);
    rule.shards.push_back(parseBucketShard(entry, joinPath(shards_path, entry.key), tpl, buckets, owners, ok));
  }
  std::vector<int>& owner = owners.owner;
  if (shard_entries.empty()) sink_.add(shards_path, shards->value, "a bucket table needs at least one shard");
  if (buckets) reportUnassigned(owner, shards_path, shards->key_node, "buckets", "shard");
  if (const auto* h = findEntry(entries, "hot_keys")) parseHotKeys(h->value, joinPath(path, "hot_keys"), rule);
  if (!ok || !tpl || shard_entries.empty() || std::find(owner.begin(), owner.end(), kUnowned) != owner.end()) return;
  rule.bucket_count = static_cast<uint32_t>(*buckets);
  rule.bucket_to_shard.assign(owner.begin(), owner.end());
  for (uint32_t b = 0; b < owner.size(); ++b) {
    auto& ranges = rule.shards[owner[b]].buckets;
    if (!ranges.empty() && ranges.back().last + 1 == b) ranges.back().last = b;
    else ranges.push_back({b, b});
  }
  draft.shards_complete = true;
}

void Compiler::parseHotKeys(const YAML::Node& node, const std::string& path, TableRule& rule) {
  if (node.IsNull()) return;
  if (!expectMap(sink_, node, path)) return;
  for (const auto& entry : mapEntries(sink_, node, path)) {
    std::string entry_path = joinPath(path, entry.key);
    if (entry.key.starts_with('-')) {
      sink_.add(entry_path, entry.key_node,
                "hot key " + entry.key + " is negative: use the canonical (positive) peer id, e.g. a Bot API "
                "chat id -100XXXXXXXXXX is channel id XXXXXXXXXX");
      continue;
    }
    uint64_t key = 0;
    auto [end, ec] = std::from_chars(entry.key.data(), entry.key.data() + entry.key.size(), key);
    if (ec != std::errc() || end != entry.key.data() + entry.key.size() || entry.key.empty()) {
      sink_.add(entry_path, entry.key_node, "hot key '" + entry.key + "' is not an unsigned 64-bit integer");
      continue;
    }
    auto shard_name = readString(sink_, entry.value, entry_path);
    if (!shard_name) continue;
    const Shard* shard = rule.findShard(*shard_name);
    if (!shard) {
      std::string known;
      for (const auto& s : rule.shards) known += (known.empty() ? "" : ", ") + s.name;
      sink_.add(entry_path, entry.value,
                "hot key " + entry.key + " points at shard '" + *shard_name + "', which is not a shard of table " +
                    rule.name + " (shards: " + known + ")");
      continue;
    }
    rule.hot_keys.emplace_back(key, shard->index);
  }
  std::sort(rule.hot_keys.begin(), rule.hot_keys.end());
}

char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lowerAscii(c);
  return out;
}

struct NameSite {
  std::string path;
  int line = 0;
  std::string_view what;  // "physical name", "archive name"
};

// One produced table name: a plain identifier, not a logical name, not produced twice.
void checkPhysicalName(IssueSink& sink, const std::map<std::string, std::string>& logical,
                       std::map<std::string, std::string>& physical, const NameSite& site, const std::string& name,
                       const std::string& owner) {
  std::string what(site.what);
  if (!isIdentifier(name)) {
    sink.add(site.path, site.line, what + " '" + name + "' (" + owner + ") is not a plain SQL identifier");
  }
  auto key = lowered(name);
  if (auto l = logical.find(key); l != logical.end()) {
    sink.add(site.path, site.line,
             what + " '" + name + "' (" + owner + ") is also a logical table name (" + l->second + ")");
  }
  auto [it, fresh] = physical.emplace(key, owner);
  if (!fresh) sink.add(site.path, site.line, what + " '" + name + "' of " + owner + " is also produced by " + it->second);
}

// Names must be unique across the whole map, ignoring case: logical names,
// and physical names against each other and against logical names.
void checkNames(IssueSink& sink, const std::vector<TableDraft>& drafts) {
  std::map<std::string, std::string> logical;  // lowered -> as written
  for (const auto& d : drafts) {
    auto [it, fresh] = logical.emplace(lowered(d.rule.name), d.rule.name);
    if (!fresh) {
      sink.add(joinPath("tables", d.rule.name), d.name_line,
               "table '" + d.rule.name + "' differs from table '" + it->second +
                   "' only in letter case: names are matched case-insensitively");
    }
  }
  std::map<std::string, std::string> physical;  // lowered -> "table t shard s"
  for (const auto& d : drafts) {
    if (!d.shards_complete) continue;
    std::string path = joinPath(joinPath("tables", d.rule.name), "table");
    std::string archive_path = joinPath(joinPath(joinPath("tables", d.rule.name), "archive"), "table");
    for (const auto& s : d.rule.shards) {
      checkPhysicalName(sink, logical, physical, {path, d.template_line, "physical name"}, s.physical_table,
                        "table " + d.rule.name + " shard " + s.name);
    }
    for (const auto& s : d.rule.shards) {
      if (s.archive_table.empty()) continue;
      checkPhysicalName(sink, logical, physical, {archive_path, d.archive_line, "archive name"}, s.archive_table,
                        "the archive of table " + d.rule.name + " shard " + s.name);
    }
  }
}

}  // namespace

ShardMapResult compileShardMap(std::string_view yaml_text, std::span<const std::string> backend_names) {
  ShardMapIssues issues;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {  // yaml-cpp reports syntax errors by throwing
    issues.push_back({"", e.mark.is_null() ? 0 : e.mark.line + 1, "YAML syntax error: " + e.msg});
    return std::unexpected(std::move(issues));
  }
  Compiler compiler(issues, backend_names);
  std::optional<uint64_t> version;
  try {
    version = compiler.parseRoot(root);
  } catch (const YAML::Exception& e) {  // defensive: an accessor we did not expect to throw did
    issues.push_back({"", e.mark.is_null() ? 0 : e.mark.line + 1, "invalid shard map: " + e.msg});
  }
  IssueSink sink(issues);
  checkNames(sink, compiler.drafts);
  if (!issues.empty() || !version) {
    if (issues.empty()) issues.push_back({"version", 0, "missing version"});
    return std::unexpected(std::move(issues));
  }
  CompiledShardMap::Parts parts;
  parts.version = *version;
  parts.source_text = std::string(yaml_text);
  for (auto& d : compiler.drafts) parts.tables.push_back(std::move(d.rule));
  return std::make_shared<const CompiledShardMap>(std::move(parts));
}

}  // namespace sp::routing
