// Shard-map YAML -> ShardMapFile with the shared walker (yaml_walker.hpp).
// Every check runs even after an earlier one failed, so one pass reports every
// problem of the file's shape; routing::compileShardMap checks the meaning.
#include "conf/shard_map_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "conf/yaml_walker.hpp"

namespace sp::conf {
namespace {

using namespace detail;

constexpr std::string_view kTopKeys[] = {"version", "tables"};
constexpr std::string_view kTableKeys[] = {"key",    "method",     "shards",  "table",    "backends",
                                           "scatter", "key_prefix", "buckets", "hot_keys", "month",
                                           "archive", "backfill"};
constexpr std::string_view kArchiveKeys[] = {"table", "time_column", "seq_column"};
constexpr std::string_view kBackfillKeys[] = {"table"};
constexpr std::string_view kModOnlyKeys[] = {"backends"};
constexpr std::string_view kBucketOnlyKeys[] = {"key_prefix", "buckets", "hot_keys"};
constexpr std::string_view kMonthKeys[] = {"column", "time_column", "max_span_months"};
constexpr std::string_view kBucketShardKeys[] = {"buckets", "backend"};
constexpr std::string_view kMethods[] = {"mod", "bucket"};
constexpr std::string_view kScatterPolicies[] = {"deny", "aggregates", "allow"};

class Reader {
 public:
  explicit Reader(ConfigIssues& issues) : w_(issues) {}
  void readRoot(const YAML::Node& root, ShardMapFile& out);

 private:
  std::optional<SourceText> text(const YAML::Node& value, const std::string& path) {
    auto s = w_.readString(value, path, NullIs::kMissing, true);
    if (!s) return std::nullopt;
    return SourceText{std::move(*s), lineOf(value)};
  }
  void readTable(const MapEntry& entry, const std::string& path, ShardMapFile::Table& t);
  void readCommon(std::span<const MapEntry> fields, const YAML::Node& at, const std::string& path,
                  ShardMapFile::Table& t);
  ShardMapFile::Month readMonth(const YAML::Node& node, const std::string& path);
  // `archive:` and `backfill:` (kBackfillKeys, example name "<table>_backfill_...").
  std::optional<ShardMapFile::Archive> readArchive(const MapEntry& entry, const std::string& path,
                                                   const std::string& table_name,
                                                   std::span<const std::string_view> keys = kArchiveKeys);
  void reportMethodKeys(std::span<const MapEntry> fields, const std::string& path, ShardMapMethod method);
  void readModShards(std::span<const MapEntry> fields, const std::string& path, ShardMapFile::Table& t);
  void readBucketShards(std::span<const MapEntry> fields, const std::string& path, ShardMapFile::Table& t);
  ShardMapFile::BucketShard readBucketShard(const MapEntry& entry, const std::string& path);
  std::vector<ShardMapFile::Pair> readPairs(const YAML::Node& map, const std::string& path);

  Walker w_;
};

void Reader::readRoot(const YAML::Node& root, ShardMapFile& out) {
  if (!root.IsDefined() || root.IsNull()) {
    w_.report("", 0, "the shard map is empty (expected 'version' and 'tables')");
    return;
  }
  if (!w_.expectMap(root, "")) return;
  auto fields = checkKeys(w_, root, "", kTopKeys);
  if (const auto* v = findEntry(fields, "version")) {
    out.version = w_.readUInt(v->value, "version", 1, UINT64_MAX, Quoted::kRefused);
  } else {
    w_.report("version", root, "missing required key 'version' (a positive integer)");
  }
  const auto* tables = findEntry(fields, "tables");
  if (!tables) {
    w_.report("tables", root, "missing required key 'tables'");
  } else if (!tables->value.IsNull() && w_.expectMap(tables->value, "tables")) {
    for (const auto& entry : entries(w_, tables->value, "tables")) {
      readTable(entry, joinPath("tables", entry.name()), out.tables.emplace_back());
    }
  }
}

void Reader::readTable(const MapEntry& entry, const std::string& path, ShardMapFile::Table& t) {
  t.name = SourceText{entry.name(), lineOf(entry.key)};
  if (!w_.expectMap(entry.value, path)) return;
  t.readable = true;
  auto fields = checkKeys(w_, entry.value, path, kTableKeys);
  readCommon(fields, entry.value, path, t);
  if (!t.method) return;
  reportMethodKeys(fields, path, *t.method);
  if (*t.method == ShardMapMethod::kMod) readModShards(fields, path, t);
  else readBucketShards(fields, path, t);
  if (const auto* a = findEntry(fields, "archive")) t.archive = readArchive(*a, joinPath(path, "archive"), t.name.text);
  if (const auto* b = findEntry(fields, "backfill")) {
    t.backfill = readArchive(*b, joinPath(path, "backfill"), t.name.text, kBackfillKeys);
  }
}

std::optional<ShardMapFile::Archive> Reader::readArchive(const MapEntry& entry, const std::string& path,
                                                         const std::string& table_name,
                                                         std::span<const std::string_view> keys) {
  if (!w_.expectMap(entry.value, path)) return std::nullopt;
  ShardMapFile::Archive archive;
  archive.key_line = lineOf(entry.key);
  auto fields = checkKeys(w_, entry.value, path, keys);
  if (const auto* t = findEntry(fields, "table")) {
    archive.table = text(t->value, joinPath(path, "table"));
  } else {
    w_.report(joinPath(path, "table"), entry.value,
              fmt::format("missing required key 'table' (e.g. \"{}_{}_{{shard}}\")", table_name,
                          keys.size() == 1 ? "backfill" : "archive"));
  }
  if (const auto* tc = findEntry(fields, "time_column")) {
    archive.time_column = text(tc->value, joinPath(path, "time_column"));
    archive.complete = archive.time_column.has_value();
  }
  if (const auto* sc = findEntry(fields, "seq_column")) {
    archive.seq_column = text(sc->value, joinPath(path, "seq_column"));
    archive.complete = archive.complete && archive.seq_column.has_value();
  }
  return archive;
}

void Reader::readCommon(std::span<const MapEntry> fields, const YAML::Node& at, const std::string& path,
                        ShardMapFile::Table& t) {
  if (const auto* k = findEntry(fields, "key")) {
    t.key = text(k->value, joinPath(path, "key"));
  } else {
    w_.report(joinPath(path, "key"), fields.empty() ? 0 : lineOf(fields.front().key),
              "missing required key 'key' (the shard key column)");
  }
  if (const auto* s = findEntry(fields, "scatter")) {
    t.scatter = w_.readChoice(s->value, joinPath(path, "scatter"), kScatterPolicies);
  }
  if (const auto* m = findEntry(fields, "month")) t.month = readMonth(m->value, joinPath(path, "month"));
  if (const auto* m = findEntry(fields, "method")) {
    if (auto method = w_.readChoice(m->value, joinPath(path, "method"), kMethods)) {
      t.method = *method == "mod" ? ShardMapMethod::kMod : ShardMapMethod::kBucket;
    }
  } else {
    w_.report(joinPath(path, "method"), at, "missing required key 'method' (mod or bucket)");
  }
  if (const auto* tpl = findEntry(fields, "table")) {
    t.table = text(tpl->value, joinPath(path, "table"));
  } else {
    w_.report(joinPath(path, "table"), at,
              fmt::format("missing required key 'table' (e.g. \"{}_{{shard:02}}\")", t.name.text));
  }
}

ShardMapFile::Month Reader::readMonth(const YAML::Node& node, const std::string& path) {
  ShardMapFile::Month month;
  month.line = lineOf(node);
  if (!w_.expectMap(node, path)) {
    month.complete = false;
    return month;
  }
  auto fields = checkKeys(w_, node, path, kMonthKeys);
  if (const auto* c = findEntry(fields, "column")) {
    month.column = text(c->value, joinPath(path, "column"));
    month.complete = month.complete && month.column.has_value();
  } else {
    w_.report(joinPath(path, "column"), node, "missing required key 'column' (the DATE month column)");
    month.complete = false;
  }
  if (const auto* t = findEntry(fields, "time_column")) {
    month.time_column = text(t->value, joinPath(path, "time_column"));
    month.complete = month.complete && month.time_column.has_value();
  }
  if (const auto* s = findEntry(fields, "max_span_months")) {
    auto span = w_.readUInt(s->value, joinPath(path, "max_span_months"), 1, kMaxSpanMonths, Quoted::kRefused);
    month.complete = month.complete && span.has_value();
    if (span) month.max_span_months = static_cast<uint32_t>(*span);
  }
  return month;
}

void Reader::reportMethodKeys(std::span<const MapEntry> fields, const std::string& path, ShardMapMethod method) {
  std::span<const std::string_view> foreign = kModOnlyKeys;
  if (method == ShardMapMethod::kMod) foreign = kBucketOnlyKeys;
  for (std::string_view key : foreign) {
    if (const auto* e = findEntry(fields, key)) {
      w_.report(joinPath(path, key), e->key,
                fmt::format("'{}' is only valid for method: {}", key, method == ShardMapMethod::kMod ? "bucket" : "mod"));
    }
  }
}

// A mapping of names to strings (a mod table's backends, hot keys).
std::vector<ShardMapFile::Pair> Reader::readPairs(const YAML::Node& map, const std::string& path) {
  std::vector<ShardMapFile::Pair> out;
  for (const auto& entry : entries(w_, map, path)) {
    out.push_back({SourceText{entry.name(), lineOf(entry.key)}, text(entry.value, joinPath(path, entry.name()))});
  }
  return out;
}

void Reader::readModShards(std::span<const MapEntry> fields, const std::string& path, ShardMapFile::Table& t) {
  if (const auto* s = findEntry(fields, "shards")) {
    t.shards = w_.readUInt(s->value, joinPath(path, "shards"), 1, kMaxModShards, Quoted::kRefused);
  } else {
    w_.report(joinPath(path, "shards"), 0, "missing required key 'shards' (the number of shards)");
  }
  const auto* backends = findEntry(fields, "backends");
  const std::string backends_path = joinPath(path, "backends");
  if (!backends) {
    w_.report(backends_path, 0, "missing required key 'backends' (backend name -> shard ranges, e.g. {db0: \"0-7\"})");
    return;
  }
  t.backends_line = lineOf(backends->key);
  if (!w_.expectMap(backends->value, backends_path)) return;
  t.backends_present = true;
  t.backends = readPairs(backends->value, backends_path);
}

void Reader::readBucketShards(std::span<const MapEntry> fields, const std::string& path, ShardMapFile::Table& t) {
  if (const auto* p = findEntry(fields, "key_prefix")) {
    if (auto prefix = text(p->value, joinPath(path, "key_prefix"))) t.key_prefix = std::move(prefix->text);
  }
  if (const auto* b = findEntry(fields, "buckets")) {
    t.buckets = w_.readUInt(b->value, joinPath(path, "buckets"), 1, kMaxShardMapBuckets, Quoted::kRefused);
  } else {
    w_.report(joinPath(path, "buckets"), 0, "missing required key 'buckets' (the number of virtual buckets)");
  }
  const auto* shards = findEntry(fields, "shards");
  const std::string shards_path = joinPath(path, "shards");
  if (!shards) {
    w_.report(shards_path, 0, "missing required key 'shards' (shard name -> {buckets: \"a-b\", backend: name})");
  } else if (w_.expectMap(shards->value, shards_path)) {
    t.shards_present = true;
    t.shards_key_line = lineOf(shards->key);
    t.shards_value_line = lineOf(shards->value);
    for (const auto& entry : entries(w_, shards->value, shards_path)) {
      t.bucket_shards.push_back(readBucketShard(entry, joinPath(shards_path, entry.name())));
    }
  }
  if (const auto* h = findEntry(fields, "hot_keys")) {
    const std::string hot_path = joinPath(path, "hot_keys");
    if (!h->value.IsNull() && w_.expectMap(h->value, hot_path)) t.hot_keys = readPairs(h->value, hot_path);
  }
}

ShardMapFile::BucketShard Reader::readBucketShard(const MapEntry& entry, const std::string& path) {
  ShardMapFile::BucketShard shard;
  shard.name = SourceText{entry.name(), lineOf(entry.key)};
  shard.line = lineOf(entry.value);
  if (!w_.expectMap(entry.value, path)) return shard;
  shard.readable = true;
  auto fields = checkKeys(w_, entry.value, path, kBucketShardKeys);
  if (const auto* be = findEntry(fields, "backend")) {
    shard.backend = text(be->value, joinPath(path, "backend"));
  } else {
    w_.report(joinPath(path, "backend"), entry.value, "missing required key 'backend'");
  }
  if (const auto* bk = findEntry(fields, "buckets")) {
    shard.buckets = text(bk->value, joinPath(path, "buckets"));
  } else {
    w_.report(joinPath(path, "buckets"), entry.value, "missing required key 'buckets' (e.g. \"0-15\")");
  }
  return shard;
}

}  // namespace

ShardMapFile readShardMapText(std::string_view yaml_text, ConfigIssues& issues) {
  ShardMapFile out;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {  // yaml-cpp reports syntax errors by throwing
    issues.push_back({"", e.mark.is_null() ? 0 : e.mark.line + 1, "YAML syntax error: " + e.msg});
    return out;
  }
  try {
    Reader(issues).readRoot(root, out);
  } catch (const YAML::Exception& e) {  // defensive: an accessor we did not expect to throw did
    issues.push_back({"", e.mark.is_null() ? 0 : e.mark.line + 1, "invalid shard map: " + e.msg});
  }
  return out;
}

ShardMapFile readShardMapFile(const std::string& path, std::string& text, ConfigIssues& issues) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    issues.push_back({"", 0, "cannot open shard map file '" + path + "'"});
    return {};
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    issues.push_back({"", 0, "cannot read shard map file '" + path + "'"});
    return {};
  }
  text = content.str();
  return readShardMapText(text, issues);
}

}  // namespace sp::conf
