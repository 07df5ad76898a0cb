#include "routing/map/move_plan.hpp"

#include <algorithm>
#include <sstream>

#include "routing/map/bucket_ranges.hpp"
#include "routing/map/crc32.hpp"

namespace sp::routing {

namespace {

std::string joinNumbers(const std::vector<uint32_t>& values) {
  std::string out;
  for (auto v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::vector<BucketRange> toRanges(std::vector<uint32_t> buckets) {
  std::sort(buckets.begin(), buckets.end());
  std::vector<BucketRange> out;
  for (auto b : buckets) {
    if (!out.empty() && out.back().last + 1 == b) out.back().last = b;
    else out.push_back({b, b});
  }
  return out;
}

std::vector<uint32_t> fromRanges(const std::vector<BucketRange>& ranges) {
  std::vector<uint32_t> out;
  for (const auto& r : ranges) {
    for (uint32_t b = r.first; b <= r.last; ++b) out.push_back(b);
  }
  return out;
}

// `s` between `q` quotes, the quote and backslashes escaped with a
// backslash: a YAML double-quoted scalar (q = '"') or an SQL string (q = '\'').
std::string quoteWith(std::string_view s, char q) {
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') out += '\\';
    out += c;
  }
  return out + q;
}

std::string quote(std::string_view s) { return quoteWith(s, '"'); }
std::string sqlString(std::string_view s) { return quoteWith(s, '\''); }

std::string_view scatterName(ScatterPolicy p) { return toString(p); }

void renderTable(std::ostringstream& out, const TableRule& t) {
  out << "  " << t.name << ":\n";
  out << "    key: " << t.key << "\n";
  out << "    method: " << toString(t.method) << "\n";
  out << "    table: " << quote(t.table_template) << "\n";
  out << "    scatter: " << scatterName(t.scatter) << "\n";
  if (t.method == ShardMethod::kMod) {
    out << "    shards: " << t.shards.size() << "\n";
    out << "    backends:\n";
    std::vector<std::string> order;
    for (const auto& s : t.shards) {
      if (std::find(order.begin(), order.end(), s.backend) == order.end()) order.push_back(s.backend);
    }
    for (const auto& backend : order) {
      std::vector<uint32_t> indexes;
      for (const auto& s : t.shards) {
        if (s.backend == backend) indexes.push_back(s.index);
      }
      out << "      " << backend << ": \"" << renderRanges(toRanges(indexes)) << "\"\n";
    }
  } else {
    out << "    key_prefix: " << quote(t.key_prefix) << "\n";
    out << "    buckets: " << t.bucket_count << "\n";
    out << "    shards:\n";
    for (const auto& s : t.shards) {
      out << "      " << s.name << ": {buckets: \"" << renderRanges(s.buckets) << "\", backend: " << s.backend << "}\n";
    }
    if (t.hot_keys.empty()) {
      out << "    hot_keys: {}\n";
    } else {
      out << "    hot_keys:\n";
      for (const auto& [key, shard] : t.hot_keys) out << "      " << key << ": " << t.shards[shard].name << "\n";
    }
  }
  if (t.month) {
    out << "    month: {column: " << t.month->column;
    if (!t.month->time_column.empty()) out << ", time_column: " << t.month->time_column;
    out << ", max_span_months: " << t.month->max_span_months << "}\n";
  }
  if (!t.archive_template.empty()) {
    out << "    archive: {table: " << quote(t.archive_template) << ", time_column: " << t.archive_time_column << "}\n";
  }
}

MoveRefusal invalid(std::string message) { return {move_error::kInvalid, std::move(message)}; }
MoveRefusal already(std::string message) { return {move_error::kAlreadyThere, std::move(message)}; }

std::string quotedColumn(const std::string& name) { return "`" + name + "`"; }

std::string bucketExpression(const TableRule& t) {
  return "CRC32(CONCAT(" + sqlString(t.key_prefix) + ", " + quotedColumn(t.key) + ")) % " +
         std::to_string(t.bucket_count);
}

// Where the rows come from and go to.
void setEnds(MovePlan& plan, const Shard& source, const Shard& target) {
  plan.source_shard = source.name;
  plan.source_backend = source.backend;
  plan.source_table = source.physical_table;
  plan.target_shard = target.name;
  plan.target_backend = target.backend;
  plan.target_table = target.physical_table;
}

std::expected<void, MoveRefusal> planBuckets(const TableRule& rule, MovePlan& plan, std::vector<TableRule>& tables,
                                            size_t table_index) {
  const auto& req = plan.request;
  const Shard* target = rule.findShard(req.target);
  if (!target) return std::unexpected(invalid("table " + rule.name + " has no shard '" + req.target + "'"));
  if (req.buckets.empty()) return std::unexpected(invalid("no bucket given"));
  uint32_t source_index = UINT32_MAX;
  for (auto b : req.buckets) {
    if (b >= rule.bucket_count) {
      return std::unexpected(invalid("bucket " + std::to_string(b) + " is out of range: " + rule.name + " has " +
                                     std::to_string(rule.bucket_count) + " buckets (0-" +
                                     std::to_string(rule.bucket_count - 1) + ")"));
    }
    uint32_t owner = rule.bucket_to_shard[b];
    if (owner == target->index) {
      return std::unexpected(already("bucket " + std::to_string(b) + " is already on shard " + target->name));
    }
    if (source_index != UINT32_MAX && owner != source_index) {
      return std::unexpected(invalid("buckets " + joinNumbers(req.buckets) + " are on different shards (" +
                                     rule.shards[source_index].name + ", " + rule.shards[owner].name +
                                     "): move the buckets of one shard per command"));
    }
    source_index = owner;
  }
  const Shard& source = rule.shards[source_index];
  setEnds(plan, source, *target);
  plan.keys.buckets = req.buckets;
  plan.keys.bucket_count = rule.bucket_count;
  plan.keys.prefix_crc = rule.prefix_crc;
  // Hot keys never move with their bucket: those pinned to the source stay
  // there, and the rows of those pinned elsewhere (the target included) are
  // not the bucket's to copy, clear or delete.
  for (const auto& [key, shard] : rule.hot_keys) plan.keys.staying_keys.push_back(key);
  plan.row_predicate = bucketExpression(rule) + " IN (" + joinNumbers(req.buckets) + ")";
  if (!plan.keys.staying_keys.empty()) {
    std::string keys;
    for (auto k : plan.keys.staying_keys) keys += (keys.empty() ? "" : ",") + std::to_string(k);
    plan.row_predicate += " AND " + quotedColumn(rule.key) + " NOT IN (" + keys + ")";
  }
  // The map after the move: the buckets leave the source for the target.
  TableRule& next = tables[table_index];
  std::vector<uint32_t> source_buckets = fromRanges(next.shards[source_index].buckets);
  std::erase_if(source_buckets, [&](uint32_t b) {
    return std::binary_search(req.buckets.begin(), req.buckets.end(), b);
  });
  std::vector<uint32_t> target_buckets = fromRanges(next.shards[target->index].buckets);
  target_buckets.insert(target_buckets.end(), req.buckets.begin(), req.buckets.end());
  next.shards[source_index].buckets = toRanges(source_buckets);
  next.shards[target->index].buckets = toRanges(target_buckets);
  return {};
}

std::expected<void, MoveRefusal> planKey(const TableRule& rule, MovePlan& plan, std::vector<TableRule>& tables,
                                        size_t table_index) {
  const auto& req = plan.request;
  const Shard* target = rule.findShard(req.target);
  if (!target) return std::unexpected(invalid("table " + rule.name + " has no shard '" + req.target + "'"));
  const Shard& source = rule.shardOf(req.key);
  if (source.index == target->index) {
    return std::unexpected(already("key " + std::to_string(req.key) + " already lives on shard " + target->name));
  }
  setEnds(plan, source, *target);
  plan.keys.key = req.key;
  plan.row_predicate = quotedColumn(rule.key) + " = " + std::to_string(req.key);
  // Pinned to the target, or unpinned when the target is where its bucket lives.
  auto& hot = tables[table_index].hot_keys;
  std::erase_if(hot, [&](const auto& p) { return p.first == req.key; });
  if (rule.bucket_to_shard[rule.bucketOf(req.key)] != target->index) {
    hot.emplace_back(req.key, target->index);
    std::sort(hot.begin(), hot.end());
  }
  return {};
}

std::expected<void, MoveRefusal> planShard(const TableRule& rule, MovePlan& plan, std::vector<TableRule>& tables,
                                          size_t table_index, const std::vector<std::string>& backend_names) {
  const auto& req = plan.request;
  if (req.shard >= rule.shards.size()) {
    return std::unexpected(invalid("shard " + std::to_string(req.shard) + " is out of range: " + rule.name + " has " +
                                   std::to_string(rule.shards.size()) + " shards"));
  }
  if (std::find(backend_names.begin(), backend_names.end(), req.target) == backend_names.end()) {
    return std::unexpected(invalid("unknown backend '" + req.target + "' (not in the config's backends)"));
  }
  if (!rule.archive_template.empty()) {
    return std::unexpected(invalid("table " + rule.name +
                                   " has archive tables (archive: in the map); MOVE SHARD does not move them"));
  }
  const Shard& source = rule.shards[req.shard];
  if (source.backend == req.target) {
    return std::unexpected(already("shard " + std::to_string(req.shard) + " of " + rule.name + " is already on " +
                                   req.target));
  }
  plan.source_shard = plan.target_shard = source.name;
  plan.source_backend = source.backend;
  plan.source_table = plan.target_table = source.physical_table;
  plan.target_backend = req.target;
  plan.keys.shard = req.shard;
  plan.keys.shard_count = static_cast<uint32_t>(rule.shards.size());
  tables[table_index].shards[req.shard].backend = req.target;
  return {};
}

}  // namespace

std::string_view moveKindName(MoveKind kind) {
  switch (kind) {
    case MoveKind::kBuckets: return "bucket";
    case MoveKind::kKey: return "key";
    case MoveKind::kShard: return "shard";
  }
  return "bucket";
}

std::optional<MoveKind> moveKindFrom(std::string_view name) {
  if (name == "bucket") return MoveKind::kBuckets;
  if (name == "key") return MoveKind::kKey;
  if (name == "shard") return MoveKind::kShard;
  return std::nullopt;
}

std::string describeMove(const MoveRequest& r) {
  switch (r.kind) {
    case MoveKind::kBuckets:
      return "bucket " + joinNumbers(r.buckets) + " of " + r.table + " to " + r.target;
    case MoveKind::kKey:
      return "key " + std::to_string(r.key) + " of " + r.table + " to " + r.target;
    case MoveKind::kShard:
      return "shard " + std::to_string(r.shard) + " of " + r.table + " to " + r.target;
  }
  return "";
}

bool MovingKeys::contains(uint64_t k) const {
  switch (kind) {
    case MoveKind::kBuckets: {
      if (bucket_count == 0 || std::binary_search(staying_keys.begin(), staying_keys.end(), k)) return false;
      uint32_t bucket = crc32OfPrefixedKey(prefix_crc, k) % bucket_count;
      return std::binary_search(buckets.begin(), buckets.end(), bucket);
    }
    case MoveKind::kKey:
      return k == key;
    case MoveKind::kShard:
      return shard_count != 0 && k % shard_count == shard;
  }
  return false;
}

std::expected<MovePlan, MoveRefusal> planMove(const CompiledShardMap& map, const MoveRequest& request,
                                              const std::vector<std::string>& backend_names) {
  const TableRule* rule = map.findTable(request.table);
  if (!rule) return std::unexpected(invalid("table '" + request.table + "' is not sharded (not in the shard map)"));
  bool wants_bucket_table = request.kind != MoveKind::kShard;
  if ((rule->method == ShardMethod::kBucket) != wants_bucket_table) {
    return std::unexpected(invalid(std::string(wants_bucket_table ? "MOVE BUCKET and MOVE KEY need a bucket table; "
                                                                  : "MOVE SHARD needs a mod table; ") +
                                   rule->name + " is a " + std::string(toString(rule->method)) + " table"));
  }
  MovePlan plan;
  plan.request = request;
  plan.request.table = rule->name;
  std::sort(plan.request.buckets.begin(), plan.request.buckets.end());
  plan.request.buckets.erase(std::unique(plan.request.buckets.begin(), plan.request.buckets.end()),
                             plan.request.buckets.end());
  plan.key_column = rule->key;
  plan.keys.table = rule->name;
  plan.keys.kind = request.kind;
  std::vector<TableRule> tables = map.tables();
  size_t index = static_cast<size_t>(rule - map.tables().data());
  std::expected<void, MoveRefusal> done;
  switch (request.kind) {
    case MoveKind::kBuckets: done = planBuckets(*rule, plan, tables, index); break;
    case MoveKind::kKey: done = planKey(*rule, plan, tables, index); break;
    case MoveKind::kShard: done = planShard(*rule, plan, tables, index, backend_names); break;
  }
  if (!done) return std::unexpected(done.error());
  plan.new_version = map.version() + 1;
  plan.new_map_yaml = renderShardMapYaml(tables, plan.new_version);
  return plan;
}

std::string renderShardMapYaml(const std::vector<TableRule>& tables, uint64_t version) {
  std::ostringstream out;
  out << "# Written by shardproxy (MOVE on the admin port); docs/shard-map.md documents the format.\n";
  out << "version: " << version << "\n";
  if (tables.empty()) {
    out << "tables: {}\n";
    return out.str();
  }
  out << "tables:\n";
  for (const auto& t : tables) renderTable(out, t);
  return out.str();
}

}  // namespace sp::routing
