#include "coord/fleet_fence.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

#include "coord/fleet_records.hpp"

namespace sp::coord {

namespace json = boost::json;

namespace {
std::string base(std::string_view prefix) {
  std::string p(prefix);
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

std::optional<uint64_t> unsignedOf(const json::value& v) {
  if (v.is_uint64()) return v.as_uint64();
  if (v.is_int64() && v.as_int64() >= 0) return static_cast<uint64_t>(v.as_int64());
  return std::nullopt;
}

// A uint32 field of `o` (absent: 0); false when present and not one.
bool readU32(const json::object& o, std::string_view name, uint32_t& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  auto n = unsignedOf(it->value());
  if (!n || *n > UINT32_MAX) return false;
  out = static_cast<uint32_t>(*n);
  return true;
}
}  // namespace

bool FenceKeys::holds(std::string_view t, uint32_t bucket) const {
  return t == table && kind == "bucket" && std::binary_search(buckets.begin(), buckets.end(), bucket);
}

std::string fenceRoot(std::string_view prefix) { return base(prefix) + "/fence/"; }
std::string fenceEpochKey(std::string_view prefix) { return base(prefix) + "/fence-epoch"; }
std::string fenceDirectory(std::string_view prefix, int64_t epoch) {
  return fenceRoot(prefix) + std::to_string(epoch) + "/";
}
std::string fenceRequestKey(std::string_view prefix, int64_t epoch) { return fenceDirectory(prefix, epoch) + "request"; }
std::string fenceAckPrefix(std::string_view prefix, int64_t epoch) { return fenceDirectory(prefix, epoch) + "ack/"; }
std::string fenceAckKey(std::string_view prefix, int64_t epoch, std::string_view proxy) {
  return fenceAckPrefix(prefix, epoch) + std::string(proxy);
}
std::string fenceSwitchedKey(std::string_view prefix, int64_t epoch) { return fenceDirectory(prefix, epoch) + "switched"; }
std::string rosterPrefix(std::string_view prefix) { return base(prefix) + "/roster/"; }
std::string rosterKey(std::string_view prefix, std::string_view name) { return rosterPrefix(prefix) + std::string(name); }

std::optional<FenceKeyRef> parseFenceKey(std::string_view prefix, std::string_view key) {
  const std::string root = fenceRoot(prefix);
  if (!key.starts_with(root)) return std::nullopt;
  key.remove_prefix(root.size());
  size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  FenceKeyRef ref;
  auto [ptr, ec] = std::from_chars(key.data(), key.data() + slash, ref.epoch);
  if (ec != std::errc() || ptr != key.data() + slash || ref.epoch <= 0) return std::nullopt;
  std::string_view rest = key.substr(slash + 1);
  if (rest == "request") ref.kind = FenceKeyRef::Kind::kRequest;
  else if (rest == "switched") ref.kind = FenceKeyRef::Kind::kSwitched;
  else if (rest.starts_with("ack/")) ref.kind = FenceKeyRef::Kind::kAck;
  return ref;
}

std::string encodeFenceRequest(const FenceKeys& keys, std::string_view mover) {
  json::object o;
  o["table"] = keys.table;
  o["kind"] = keys.kind;
  json::array buckets;
  for (uint32_t b : keys.buckets) buckets.push_back(b);
  o["buckets"] = std::move(buckets);
  o["bucket_count"] = keys.bucket_count;
  o["prefix_crc"] = keys.prefix_crc;
  json::array staying;
  for (uint64_t k : keys.staying_keys) staying.push_back(k);
  o["staying_keys"] = std::move(staying);
  o["key"] = keys.key;
  o["shard"] = keys.shard;
  o["shard_count"] = keys.shard_count;
  o["source_table"] = keys.source_table;
  o["mover"] = mover;
  return json::serialize(o);
}

std::expected<FenceKeys, std::string> decodeFenceRequest(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::unexpected("malformed fence request");
  const auto& o = v.as_object();
  FenceKeys keys;
  auto table = o.find("table");
  auto buckets = o.find("buckets");
  if (table == o.end() || !table->value().is_string() || buckets == o.end() || !buckets->value().is_array()) {
    return std::unexpected("malformed fence request: needs table and buckets");
  }
  keys.table = table->value().as_string();
  if (auto kind = o.find("kind"); kind != o.end()) {
    if (!kind->value().is_string()) return std::unexpected("malformed fence request: kind");
    keys.kind = kind->value().as_string();
    if (keys.kind != "bucket" && keys.kind != "key" && keys.kind != "shard") {
      return std::unexpected("malformed fence request: unknown kind " + keys.kind);
    }
  }
  for (const auto& b : buckets->value().as_array()) {
    auto n = unsignedOf(b);
    if (!n) return std::unexpected("malformed fence request: bucket");
    if (*n > UINT32_MAX) return std::unexpected("malformed fence request: bucket out of range");
    keys.buckets.push_back(static_cast<uint32_t>(*n));
  }
  std::sort(keys.buckets.begin(), keys.buckets.end());
  if (auto staying = o.find("staying_keys"); staying != o.end()) {
    if (!staying->value().is_array()) return std::unexpected("malformed fence request: staying_keys");
    for (const auto& k : staying->value().as_array()) {
      auto n = unsignedOf(k);
      if (!n) return std::unexpected("malformed fence request: staying key");
      keys.staying_keys.push_back(*n);
    }
    std::sort(keys.staying_keys.begin(), keys.staying_keys.end());
  }
  if (auto key = o.find("key"); key != o.end()) {
    auto n = unsignedOf(key->value());
    if (!n) return std::unexpected("malformed fence request: key");
    keys.key = *n;
  }
  if (!readU32(o, "bucket_count", keys.bucket_count) || !readU32(o, "prefix_crc", keys.prefix_crc) ||
      !readU32(o, "shard", keys.shard) || !readU32(o, "shard_count", keys.shard_count)) {
    return std::unexpected("malformed fence request: a count out of range");
  }
  if (auto source = o.find("source_table"); source != o.end() && source->value().is_string()) {
    keys.source_table = source->value().as_string();
  }
  return keys;
}

// ---- coordinator ----

std::expected<int64_t, std::string> FenceCoordinator::allocateEpoch(FenceStore& store) {
  return store.put(fenceEpochKey(prefix_), "", 0);
}

std::expected<int64_t, std::string> FenceCoordinator::begin(FenceStore& store, int64_t epoch, const FenceKeys& keys,
                                                            std::string_view mover, int64_t lease) {
  return store.put(fenceRequestKey(prefix_, epoch), encodeFenceRequest(keys, mover), lease);
}

std::expected<FenceProgress, std::string> FenceCoordinator::progress(FenceStore& store, int64_t epoch) {
  const std::string member_prefix = membersPrefix(prefix_);
  const std::string ack_prefix = fenceAckPrefix(prefix_, epoch);
  const std::string roster_prefix = rosterPrefix(prefix_);
  auto members = store.list(member_prefix);
  if (!members) return std::unexpected(members.error());
  auto acks = store.list(ack_prefix);
  if (!acks) return std::unexpected(acks.error());
  auto roster = store.list(roster_prefix);
  if (!roster) return std::unexpected(roster.error());
  std::set<std::string> acked, live;
  for (const auto& [key, value] : *acks) acked.insert(key.substr(ack_prefix.size()));
  FenceProgress p;
  for (const auto& [key, value] : *members) {
    std::string name = key.substr(member_prefix.size());
    live.insert(name);
    p.live.push_back(name);
    (acked.contains(name) ? p.acked : p.missing).push_back(name);
  }
  for (const auto& [key, value] : *roster) {
    std::string name = key.substr(roster_prefix.size());
    if (!live.contains(name)) p.cut_off.push_back(name);
  }
  return p;
}

std::expected<void, std::string> FenceCoordinator::markSwitched(FenceStore& store, int64_t epoch, int64_t revision,
                                                                int64_t lease) {
  auto put = store.put(fenceSwitchedKey(prefix_, epoch), std::to_string(revision), lease);
  if (!put) return std::unexpected(put.error());
  return {};
}

std::expected<std::vector<std::string>, std::string> FenceCoordinator::notServing(FenceStore& store,
                                                                                 int64_t map_revision) {
  const std::string member_prefix = membersPrefix(prefix_);
  auto members = store.list(member_prefix);
  if (!members) return std::unexpected(members.error());
  std::vector<std::string> behind;
  for (const auto& [key, value] : *members) {
    auto record = decodeMemberRecord(value);
    if (!record || record->map_revision < map_revision) behind.push_back(key.substr(member_prefix.size()));
  }
  return behind;
}

std::expected<void, std::string> FenceCoordinator::lift(FenceStore& store, int64_t epoch) {
  return store.removePrefix(fenceDirectory(prefix_, epoch));
}

std::string describeMissing(const FenceProgress& progress) {
  if (progress.live.empty()) return "no live proxy is registered in the fleet";
  std::string out;
  if (!progress.missing.empty()) {
    out = "no acknowledgement (holding these keys at this epoch) from ";
    for (size_t i = 0; i < progress.missing.size(); ++i) out += (i ? ", " : "") + progress.missing[i];
  }
  if (!progress.cut_off.empty()) {
    out += out.empty() ? "" : "; ";
    out += "in the fleet's roster without a lease (stopped, or cut off from etcd): ";
    for (size_t i = 0; i < progress.cut_off.size(); ++i) out += (i ? ", " : "") + progress.cut_off[i];
    out += " (it may still write with the map it has; bring it back, or delete its roster key if it is gone for good)";
  }
  return out;
}

}  // namespace sp::coord
