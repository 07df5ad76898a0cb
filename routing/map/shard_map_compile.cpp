// The shard-map file as read by conf/ (conf::ShardMapFile) -> validated
// CompiledShardMap: shard and bucket coverage, backends, name templates,
// identifiers and name clashes. Every check runs even after an earlier one
// failed, so one pass reports every problem (docs/shard-map.md).
#include <algorithm>
#include <charconv>
#include <climits>
#include <map>

#include "routing/map/shard_map.hpp"
#include "routing/map/shard_map_checks.hpp"

namespace sp::routing {
namespace {

using namespace detail;

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
  int backfill_line = 0;
  bool shards_complete = false;  // physical names are known
};

class Compiler {
 public:
  Compiler(ShardMapIssues& issues, std::span<const std::string> backends) : sink_(issues), backends_(backends) {}

  void compileTable(const conf::ShardMapFile::Table& table);
  std::vector<TableDraft> drafts;

 private:
  std::optional<MonthRule> compileMonth(const conf::ShardMapFile::Month& month, const std::string& path);
  void compileModShards(const conf::ShardMapFile::Table& table, const std::string& path, const NameTemplate* tpl,
                        TableDraft& draft);
  void compileBucketShards(const conf::ShardMapFile::Table& table, const std::string& path, const NameTemplate* tpl,
                           TableDraft& draft);
  // Buckets claimed so far (-1: none) and the owners' names, for overlap messages.
  struct BucketOwners {
    std::vector<int> owner;
    std::vector<std::string> names;
  };
  Shard compileBucketShard(const conf::ShardMapFile::BucketShard& spec, const std::string& path,
                           const NameTemplate* tpl, std::optional<uint64_t> buckets, BucketOwners& owners, bool& ok);
  void compileHotKeys(const conf::ShardMapFile::Table& table, const std::string& path, TableRule& rule);
  void compileArchive(const conf::ShardMapFile::Archive& archive, const std::string& path, TableDraft& draft);
  void compileBackfill(const conf::ShardMapFile::Archive& backfill, const std::string& path, TableDraft& draft);
  std::optional<NameTemplate> sideTemplate(const conf::SourceText& table, const std::string& path,
                                           const TableDraft& draft);
  std::optional<std::string> identifier(const conf::SourceText& text, const std::string& path);
  bool checkBackend(int line, const std::string& path, const std::string& name);
  void assign(std::vector<int>& owner, const std::vector<BucketRange>& ranges, int owner_id,
              const std::vector<std::string>& owner_names, const std::string& path, int line, std::string_view unit);
  void reportUnassigned(const std::vector<int>& owner, const std::string& path, int line, std::string_view unit,
                        std::string_view owner_kind);

  IssueSink sink_;
  std::span<const std::string> backends_;
};

std::optional<std::string> Compiler::identifier(const conf::SourceText& text, const std::string& path) {
  if (isIdentifier(text.text)) return text.text;
  sink_.add(path, text.line,
            "'" + text.text + "' is not a plain SQL identifier (letters, digits, _ and $; at most 64 bytes)");
  return std::nullopt;
}

void Compiler::compileTable(const conf::ShardMapFile::Table& table) {
  const std::string path = joinPath("tables", table.name.text);
  TableDraft draft;
  draft.rule.name = table.name.text;
  draft.name_line = table.name.line;
  if (!isIdentifier(table.name.text)) {
    sink_.add(path, table.name.line, "table name '" + table.name.text + "' is not a plain SQL identifier");
  }
  if (!table.readable) return;
  TableRule& rule = draft.rule;
  if (table.key) {
    if (auto key = identifier(*table.key, joinPath(path, "key"))) rule.key = *key;
  }
  if (table.scatter) {
    rule.scatter = *table.scatter == "allow"        ? ScatterPolicy::kAllow
                   : *table.scatter == "aggregates" ? ScatterPolicy::kAggregates
                                                    : ScatterPolicy::kDeny;
  }
  if (table.month) rule.month = compileMonth(*table.month, joinPath(path, "month"));
  std::optional<NameTemplate> tpl;
  if (table.table) {
    draft.template_line = table.table->line;
    rule.table_template = table.table->text;
    auto parsed = parseTemplate(table.table->text);
    if (parsed) tpl = std::move(*parsed);
    else sink_.add(joinPath(path, "table"), table.table->line, "template '" + table.table->text + "' " + parsed.error());
  }
  if (!table.method) return;
  rule.method = *table.method == conf::ShardMapMethod::kMod ? ShardMethod::kMod : ShardMethod::kBucket;
  const NameTemplate* tpl_ptr = tpl ? &*tpl : nullptr;
  if (rule.method == ShardMethod::kMod) compileModShards(table, path, tpl_ptr, draft);
  else compileBucketShards(table, path, tpl_ptr, draft);
  if (table.archive) compileArchive(*table.archive, joinPath(path, "archive"), draft);
  if (table.backfill) compileBackfill(*table.backfill, joinPath(path, "backfill"), draft);
  drafts.push_back(std::move(draft));
}

// The template of a per-shard side table (archive, backfill); nullopt when reported.
std::optional<NameTemplate> Compiler::sideTemplate(const conf::SourceText& table, const std::string& path,
                                                   const TableDraft& draft) {
  auto tpl = parseTemplate(table.text);
  if (!tpl) {
    sink_.add(joinPath(path, "table"), table.line, "template '" + table.text + "' " + tpl.error());
    return std::nullopt;
  }
  if (draft.rule.method == ShardMethod::kBucket && tpl->width != 0) {
    sink_.add(joinPath(path, "table"), table.line, "bucket tables substitute the shard name: use {shard}, not {shard:0N}");
    return std::nullopt;
  }
  return std::move(*tpl);
}

// archive: {table: "msg_archive_{shard:02}"}: the cold table of each shard,
// on the shard's backend, named like the hot one.
void Compiler::compileArchive(const conf::ShardMapFile::Archive& archive, const std::string& path,
                              TableDraft& draft) {
  if (!archive.table) return;  // not a mapping, or no `table` (reported when read)
  const std::string& text = archive.table->text;
  auto tpl = sideTemplate(*archive.table, path, draft);
  if (!tpl) return;
  if (draft.rule.month) {
    sink_.add(path, archive.key_line, "a month-partitioned table is archived by dropping month partitions, not by an "
                                      "archive table: remove either 'month' or 'archive'");
    return;
  }
  if (!archive.complete) return;
  if (archive.time_column) {
    auto column = identifier(*archive.time_column, joinPath(path, "time_column"));
    if (!column) return;
    draft.rule.archive_time_column = *column;
  }
  if (archive.seq_column) {
    auto column = identifier(*archive.seq_column, joinPath(path, "seq_column"));
    if (!column) return;
    draft.rule.archive_seq_column = *column;
  }
  draft.rule.archive_template = text;
  draft.archive_line = archive.table->line;
  if (!draft.shards_complete) return;
  for (auto& shard : draft.rule.shards) {
    shard.archive_table = draft.rule.method == ShardMethod::kMod ? tpl->expand(tpl->numericName(shard.index))
                                                                  : tpl->expand(shard.name);
  }
}

// backfill: {table: "tg_channel_message_backfill_{shard}"}: where writes
// dated in months ARCHIVE ... BEFORE dropped go, per shard (the proxy
// decides per statement, proxy/lifecycle/archived_months.hpp).
void Compiler::compileBackfill(const conf::ShardMapFile::Archive& backfill, const std::string& path,
                               TableDraft& draft) {
  if (!backfill.table) return;  // reported when read
  auto tpl = sideTemplate(*backfill.table, path, draft);
  if (!tpl) return;
  if (!draft.rule.month) {
    sink_.add(path, backfill.key_line, "a backfill table takes writes into dropped month partitions: only for a "
                                       "table with 'month'");
    return;
  }
  draft.rule.backfill_template = backfill.table->text;
  draft.backfill_line = backfill.table->line;
  if (!draft.shards_complete) return;
  for (auto& shard : draft.rule.shards) {
    shard.backfill_table = draft.rule.method == ShardMethod::kMod ? tpl->expand(tpl->numericName(shard.index))
                                                                   : tpl->expand(shard.name);
  }
}

std::optional<MonthRule> Compiler::compileMonth(const conf::ShardMapFile::Month& spec, const std::string& path) {
  MonthRule month;
  bool ok = spec.complete;
  if (spec.column) {
    auto column = identifier(*spec.column, joinPath(path, "column"));
    ok = ok && column.has_value();
    if (column) month.column = *column;
  }
  if (spec.time_column) {
    auto column = identifier(*spec.time_column, joinPath(path, "time_column"));
    ok = ok && column.has_value();
    if (column) month.time_column = *column;
  }
  if (spec.max_span_months) month.max_span_months = *spec.max_span_months;
  if (ok && month.column == month.time_column) {
    sink_.add(joinPath(path, "time_column"), spec.line, "time_column must differ from column");
    ok = false;
  }
  return ok ? std::optional(month) : std::nullopt;
}

bool Compiler::checkBackend(int line, const std::string& path, const std::string& name) {
  if (std::find(backends_.begin(), backends_.end(), name) != backends_.end()) return true;
  std::string known;
  for (const auto& b : backends_) known += (known.empty() ? "" : ", ") + b;
  sink_.add(path, line,
            "unknown backend '" + name + "' (backends in the proxy config: " + (known.empty() ? "none" : known) + ")");
  return false;
}

void Compiler::assign(std::vector<int>& owner, const std::vector<BucketRange>& ranges, int owner_id,
                      const std::vector<std::string>& owner_names, const std::string& path, int line,
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
    sink_.add(path, line,
              std::string(unit) + " " + compressNumbers(numbers) + " are also mapped to '" + owner_names[previous] +
                  "': each " + singular(unit) + " must be mapped exactly once");
  }
}

void Compiler::reportUnassigned(const std::vector<int>& owner, const std::string& path, int line,
                                std::string_view unit, std::string_view owner_kind) {
  std::vector<uint32_t> missing;
  for (uint32_t n = 0; n < owner.size(); ++n) {
    if (owner[n] == kUnowned) missing.push_back(n);
  }
  if (missing.empty()) return;
  sink_.add(path, line,
            std::string(unit) + " " + compressNumbers(missing) + " are not mapped to any " + std::string(owner_kind) +
                ": each " + singular(unit) + " must be mapped exactly once");
}

void Compiler::compileModShards(const conf::ShardMapFile::Table& table, const std::string& path,
                                const NameTemplate* tpl, TableDraft& draft) {
  TableRule& rule = draft.rule;
  if (!table.backends_present || !table.shards) return;
  const uint64_t count = *table.shards;
  const std::string backends_path = joinPath(path, "backends");
  std::vector<int> owner(count, kUnowned);
  std::vector<std::string> names;
  for (const auto& entry : table.backends) {
    std::string entry_path = joinPath(backends_path, entry.key.text);
    checkBackend(entry.key.line, entry_path, entry.key.text);
    if (!entry.value) continue;
    auto ranges = parseRanges(entry.value->text, count - 1);
    if (!ranges) {
      sink_.add(entry_path, entry.value->line, "shard list '" + entry.value->text + "': " + ranges.error());
      continue;
    }
    names.push_back(entry.key.text);
    assign(owner, *ranges, static_cast<int>(names.size() - 1), names, entry_path, entry.value->line, "shards");
  }
  reportUnassigned(owner, backends_path, table.backends_line, "shards", "backend");
  if (!tpl || std::find(owner.begin(), owner.end(), kUnowned) != owner.end()) return;
  for (uint32_t i = 0; i < count; ++i) {
    std::string name = tpl->numericName(i);
    rule.shards.push_back({i, name, tpl->expand(name), names[owner[i]], {}});
  }
  draft.shards_complete = true;
}

Shard Compiler::compileBucketShard(const conf::ShardMapFile::BucketShard& spec, const std::string& path,
                                   const NameTemplate* tpl, std::optional<uint64_t> buckets, BucketOwners& owners,
                                   bool& ok) {
  auto index = static_cast<uint32_t>(owners.names.size() - 1);
  Shard shard{index, spec.name.text, tpl ? tpl->expand(spec.name.text) : "", "", {}};
  if (!isShardName(spec.name.text)) {
    sink_.add(path, spec.name.line, "shard name '" + spec.name.text + "' must be 1-32 letters, digits or _");
    ok = false;
  }
  if (!spec.readable) {
    ok = false;
    return shard;
  }
  if (spec.backend && checkBackend(spec.backend->line, joinPath(path, "backend"), spec.backend->text)) {
    shard.backend = spec.backend->text;
  } else {
    ok = false;
  }
  if (!spec.buckets || !buckets) return shard;
  auto ranges = parseRanges(spec.buckets->text, *buckets - 1);
  if (!ranges) {
    sink_.add(joinPath(path, "buckets"), spec.buckets->line, "bucket list '" + spec.buckets->text + "': " + ranges.error());
    return shard;
  }
  assign(owners.owner, *ranges, static_cast<int>(index), owners.names, joinPath(path, "buckets"), spec.buckets->line,
         "buckets");
  return shard;
}

void Compiler::compileBucketShards(const conf::ShardMapFile::Table& table, const std::string& path,
                                   const NameTemplate* tpl, TableDraft& draft) {
  TableRule& rule = draft.rule;
  if (tpl && tpl->width != 0) {
    sink_.add(joinPath(path, "table"), 0, "bucket tables substitute the shard name: use {shard}, not {shard:0N}");
    tpl = nullptr;
  }
  if (table.key_prefix) rule.key_prefix = *table.key_prefix;
  const std::optional<uint64_t> buckets = table.buckets;
  const std::string shards_path = joinPath(path, "shards");
  if (!table.shards_present) return;
  std::vector<const conf::ShardMapFile::BucketShard*> specs;
  for (const auto& s : table.bucket_shards) specs.push_back(&s);
  std::sort(specs.begin(), specs.end(), [](auto* a, auto* b) { return a->name.text < b->name.text; });
  BucketOwners owners{std::vector<int>(buckets.value_or(0), kUnowned), {}};
  bool ok = buckets.has_value();
  for (const auto* spec : specs) {
    owners.names.push_back(spec->name.text);
    rule.shards.push_back(compileBucketShard(*spec, joinPath(shards_path, spec->name.text), tpl, buckets, owners, ok));
  }
  std::vector<int>& owner = owners.owner;
  if (specs.empty()) sink_.add(shards_path, table.shards_value_line, "a bucket table needs at least one shard");
  if (buckets) reportUnassigned(owner, shards_path, table.shards_key_line, "buckets", "shard");
  compileHotKeys(table, joinPath(path, "hot_keys"), rule);
  if (!ok || !tpl || specs.empty() || std::find(owner.begin(), owner.end(), kUnowned) != owner.end()) return;
  rule.bucket_count = static_cast<uint32_t>(*buckets);
  rule.bucket_to_shard.assign(owner.begin(), owner.end());
  for (uint32_t b = 0; b < owner.size(); ++b) {
    auto& ranges = rule.shards[owner[b]].buckets;
    if (!ranges.empty() && ranges.back().last + 1 == b) ranges.back().last = b;
    else ranges.push_back({b, b});
  }
  draft.shards_complete = true;
}

void Compiler::compileHotKeys(const conf::ShardMapFile::Table& table, const std::string& path, TableRule& rule) {
  for (const auto& entry : table.hot_keys) {
    const std::string& text = entry.key.text;
    std::string entry_path = joinPath(path, text);
    if (text.starts_with('-')) {
      sink_.add(entry_path, entry.key.line,
                "hot key " + text + " is negative: use the canonical (positive) peer id, e.g. a Bot API "
                "chat id -100XXXXXXXXXX is channel id XXXXXXXXXX");
      continue;
    }
    uint64_t key = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), key);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      sink_.add(entry_path, entry.key.line, "hot key '" + text + "' is not an unsigned 64-bit integer");
      continue;
    }
    if (!entry.value) continue;
    const std::string& shard_name = entry.value->text;
    const Shard* shard = rule.findShard(shard_name);
    if (!shard) {
      std::string known;
      for (const auto& s : rule.shards) known += (known.empty() ? "" : ", ") + s.name;
      sink_.add(entry_path, entry.value->line,
                "hot key " + text + " points at shard '" + shard_name + "', which is not a shard of table " +
                    rule.name + " (shards: " + known + ")");
      continue;
    }
    rule.hot_keys.emplace_back(key, shard->index);
  }
  std::sort(rule.hot_keys.begin(), rule.hot_keys.end());
}

char lowerAsciiChar(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lowerAsciiChar(c);
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
    std::string backfill_path = joinPath(joinPath(joinPath("tables", d.rule.name), "backfill"), "table");
    for (const auto& s : d.rule.shards) {
      if (s.backfill_table.empty()) continue;
      checkPhysicalName(sink, logical, physical, {backfill_path, d.backfill_line, "backfill name"}, s.backfill_table,
                        "the backfill table of table " + d.rule.name + " shard " + s.name);
    }
  }
}

}  // namespace

ShardMapResult compileShardMap(const conf::ShardMapFile& file, std::string source_text,
                               std::span<const std::string> backend_names, ShardMapIssues issues) {
  Compiler compiler(issues, backend_names);
  for (const auto& table : file.tables) compiler.compileTable(table);
  IssueSink sink(issues);
  checkNames(sink, compiler.drafts);
  if (!issues.empty() || !file.version) {
    if (issues.empty()) issues.push_back({"version", 0, "missing version"});
    // The file's shape and its meaning were checked in two passes: report in file order.
    std::stable_sort(issues.begin(), issues.end(), [](const ShardMapIssue& a, const ShardMapIssue& b) {
      auto rank = [](int line) { return line == 0 ? INT_MAX : line; };
      return rank(a.line) < rank(b.line);
    });
    return std::unexpected(std::move(issues));
  }
  CompiledShardMap::Parts parts;
  parts.version = *file.version;
  parts.source_text = std::move(source_text);
  for (auto& d : compiler.drafts) parts.tables.push_back(std::move(d.rule));
  return std::make_shared<const CompiledShardMap>(std::move(parts));
}

ShardMapResult compileShardMap(std::string_view yaml_text, std::span<const std::string> backend_names) {
  ShardMapIssues issues;
  conf::ShardMapFile file = conf::readShardMapText(yaml_text, issues);
  return compileShardMap(file, std::string(yaml_text), backend_names, std::move(issues));
}

}  // namespace sp::routing
