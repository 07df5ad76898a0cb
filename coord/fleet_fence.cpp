#include "coord/fleet_fence.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace sp::coord {

namespace json = boost::json;

namespace {
std::string base(std::string_view prefix) {
  std::string p(prefix);
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}
std::string fenceDir(std::string_view prefix, int64_t epoch) { return base(prefix) + "/fence/" + std::to_string(epoch); }
}  // namespace

bool FenceKeys::holds(std::string_view t, uint32_t bucket) const {
  return t == table && std::binary_search(buckets.begin(), buckets.end(), bucket);
}

std::string fenceRequestKey(std::string_view prefix, int64_t epoch) { return fenceDir(prefix, epoch) + "/request"; }
std::string fenceAckPrefix(std::string_view prefix, int64_t epoch) { return fenceDir(prefix, epoch) + "/ack/"; }

std::string encodeFenceRequest(const FenceKeys& keys, std::string_view mover) {
  json::object o;
  o["table"] = keys.table;
  json::array buckets;
  for (uint32_t b : keys.buckets) buckets.push_back(b);
  o["buckets"] = std::move(buckets);
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
  for (const auto& b : buckets->value().as_array()) {
    if (!b.is_uint64() && !(b.is_int64() && b.as_int64() >= 0)) return std::unexpected("malformed fence request: bucket");
    uint64_t n = b.is_uint64() ? b.as_uint64() : static_cast<uint64_t>(b.as_int64());
    if (n > UINT32_MAX) return std::unexpected("malformed fence request: bucket out of range");
    keys.buckets.push_back(static_cast<uint32_t>(n));
  }
  std::sort(keys.buckets.begin(), keys.buckets.end());
  return keys;
}

// ---- participant ----

std::expected<void, std::string> FenceParticipant::resynchronise(FenceStore& store, int64_t lease,
                                                                 FenceClock::time_point granted_at,
                                                                 FenceClock::duration ttl,
                                                                 const std::map<int64_t, FenceKeys>& open) {
  lease_ = lease;
  ttl_ = ttl;
  // Fences this proxy held but that are no longer open were switched while it was away: the map it just read is past them.
  held_ = open;
  for (const auto& [epoch, keys] : open) {
    if (auto put = store.put(fenceAckPrefix(prefix_, epoch) + name_, "holding", lease_); !put) {
      lease_deadline_.reset();
      return std::unexpected(put.error());
    }
  }
  lease_deadline_ = granted_at + ttl;
  return {};
}

void FenceParticipant::leaseRenewed(FenceClock::time_point sent_at) {
  if (!lease_deadline_) return;  // a lost lease comes back only through resynchronise
  lease_deadline_ = std::max(*lease_deadline_, sent_at + ttl_);
}

void FenceParticipant::leaseLost() { lease_deadline_.reset(); }

std::expected<void, std::string> FenceParticipant::onRequest(FenceStore& store, int64_t epoch, const FenceKeys& keys) {
  held_[epoch] = keys;  // held before the acknowledgement can exist
  if (!lease_deadline_) return std::unexpected("no lease: the acknowledgement waits for resynchronisation");
  auto put = store.put(fenceAckPrefix(prefix_, epoch) + name_, "holding", lease_);
  if (!put) return std::unexpected(put.error());
  return {};
}

void FenceParticipant::onSwitched(int64_t epoch) { held_.erase(epoch); }

bool FenceParticipant::synchronised(FenceClock::time_point now) const {
  return lease_deadline_ && now < *lease_deadline_;
}

FenceVerdict FenceParticipant::mayWrite(std::string_view table, uint32_t bucket, FenceClock::time_point now) const {
  bool held = std::any_of(held_.begin(), held_.end(), [&](const auto& e) { return e.second.holds(table, bucket); });
  if (!synchronised(now)) {
    // Cut off: a fence it cannot see may be switching this key right now.
    if (held) return FenceVerdict::kUnsynchronised;
    if (policy_ == LeaseLossPolicy::kStrict && fenced_tables_.contains(std::string(table))) {
      return FenceVerdict::kUnsynchronised;
    }
    return FenceVerdict::kAllowed;
  }
  return held ? FenceVerdict::kHeld : FenceVerdict::kAllowed;
}

// ---- coordinator ----

std::expected<void, std::string> FenceCoordinator::begin(FenceStore& store, int64_t epoch, const FenceKeys& keys,
                                                         std::string_view mover) {
  return store.put(fenceRequestKey(prefix_, epoch), encodeFenceRequest(keys, mover), 0);
}

std::expected<FenceProgress, std::string> FenceCoordinator::progress(FenceStore& store, int64_t epoch) {
  auto members = store.list(base(prefix_) + "/proxies/");
  if (!members) return std::unexpected(members.error());
  auto acks = store.list(fenceAckPrefix(prefix_, epoch));
  if (!acks) return std::unexpected(acks.error());
  std::set<std::string> acked;
  const std::string ack_prefix = fenceAckPrefix(prefix_, epoch);
  for (const auto& [key, value] : *acks) acked.insert(key.substr(ack_prefix.size()));
  FenceProgress p;
  const std::string member_prefix = base(prefix_) + "/proxies/";
  for (const auto& [key, value] : *members) {
    std::string name = key.substr(member_prefix.size());
    p.live.push_back(name);
    (acked.contains(name) ? p.acked : p.missing).push_back(name);
  }
  return p;
}

std::expected<void, std::string> FenceCoordinator::markSwitched(FenceStore& store, int64_t epoch, int64_t revision) {
  return store.put(fenceDir(prefix_, epoch) + "/switched", std::to_string(revision), 0);
}

std::string describeMissing(const FenceProgress& progress) {
  if (progress.live.empty()) return "no live proxy is registered in the fleet";
  std::string out = "waiting for the acknowledgement of ";
  for (size_t i = 0; i < progress.missing.size(); ++i) out += (i ? ", " : "") + progress.missing[i];
  return out + " (holding keys at this epoch)";
}

}  // namespace sp::coord
