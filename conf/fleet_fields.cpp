// The `fleet:` section (docs/configuration.md): a proxy's name in the fleet
// and where the fleet's etcd cluster is.
#include <fmt/format.h>

#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

constexpr uint64_t kMinRequestTimeoutMs = 50;
constexpr uint64_t kMaxRequestTimeoutMs = 60'000;
constexpr uint64_t kMinLeaseTtlS = 2;
constexpr uint64_t kMaxLeaseTtlS = 600;
constexpr uint64_t kMinRetryMaxMs = 50;
constexpr uint64_t kMaxRetryMaxMs = 60'000;
constexpr uint64_t kMinFenceMs = 100;
constexpr uint64_t kMaxFenceMs = 60'000;
constexpr uint64_t kMinResponseBytes = 64 * 1024;
constexpr uint64_t kMaxResponseBytes = 1ull << 30;

// "http://127.0.0.1:2379" (a trailing '/' allowed); https is not spoken.
void readEndpoint(Walker& w, const YAML::Node& v, const std::string& p, std::vector<HostPort>& out) {
  auto text = w.readString(v, p, NullIs::kMissing, false);
  if (!text) return;
  std::string_view s = *text;
  if (s.starts_with("https://")) {
    w.report(p, v, fmt::format("'{}': only http:// endpoints are supported (etcd's client URL without TLS)", s));
    return;
  }
  if (!s.starts_with("http://")) {
    w.report(p, v, fmt::format("'{}' must be an http:// URL, e.g. http://127.0.0.1:2379", s));
    return;
  }
  s.remove_prefix(7);
  if (s.ends_with('/')) s.remove_suffix(1);
  auto hp = parseHostPort(s);
  if (!hp) {
    w.report(p, v, fmt::format("'{}': {}", *text, hp.error()));
    return;
  }
  out.push_back(*hp);
}

void readPrefix(Walker& w, const YAML::Node& v, const std::string& p, std::string& out) {
  auto text = w.readString(v, p, NullIs::kMissing, false);
  if (!text) return;
  if (!text->starts_with('/') || text->size() < 2) {
    w.report(p, v, fmt::format("'{}' must start with '/' and name the cluster, e.g. /shardproxy/prod", *text));
    return;
  }
  while (text->size() > 1 && text->back() == '/') text->pop_back();
  out = std::move(*text);
}

struct FleetEntry {
  FleetConfig fleet;
  bool has_etcd = false;
};

const FieldSpec<FleetEntry> kEtcdFields[] = {
    {"endpoints", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (!w.expectSequence(v, p)) return;
       if (v.size() == 0) w.report(p, v, "needs at least one endpoint");
       for (size_t i = 0; i < v.size(); ++i) readEndpoint(w, v[i], fmt::format("{}[{}]", p, i), f.fleet.etcd_endpoints);
     }},
    {"prefix", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) { readPrefix(w, v, p, f.fleet.etcd_prefix); }},
    {"request_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinRequestTimeoutMs, kMaxRequestTimeoutMs)) f.fleet.request_timeout_ms = uint32_t(*n);
     }},
    {"max_response_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinResponseBytes, kMaxResponseBytes)) f.fleet.max_response_bytes = *n;
     }},
};

const FieldSpec<FleetEntry> kFleetFields[] = {
    {"name", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       auto name = w.readString(v, p, NullIs::kMissing, false);
       if (!name) return;
       for (char c : *name) {
         bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '-' || c == '.';
         if (!ok) {
           w.report(p, v, fmt::format("'{}' may only contain letters, digits, '_', '-' and '.'", *name));
           return;
         }
       }
       f.fleet.name = std::move(*name);
     }},
    {"etcd", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       f.has_etcd = true;
       readMapping<FleetEntry>(w, v, p, kEtcdFields, f);
     }},
    {"lease_ttl_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinLeaseTtlS, kMaxLeaseTtlS)) f.fleet.lease_ttl_s = uint32_t(*n);
     }},
    {"retry_max_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinRetryMaxMs, kMaxRetryMaxMs)) f.fleet.retry_max_ms = uint32_t(*n);
     }},
    {"fence_ack_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinFenceMs, kMaxFenceMs)) f.fleet.fence_ack_timeout_ms = uint32_t(*n);
     }},
    {"fence_serve_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, FleetEntry& f) {
       if (auto n = w.readUInt(v, p, kMinFenceMs, kMaxFenceMs)) f.fleet.fence_serve_timeout_ms = uint32_t(*n);
     }},
};

}  // namespace

void readFleet(Walker& w, const YAML::Node& v, const std::string& path, Document& doc) {
  doc.fleet_line = lineOf(v);
  if (v.IsNull()) return;  // `fleet: ~`: alone
  FleetEntry entry;
  readMapping<FleetEntry>(w, v, path, kFleetFields, entry);
  doc.config.fleet = std::move(entry.fleet);
}

void checkFleet(Walker& w, const Document& doc) {
  if (!doc.config.fleet) return;
  if (doc.config.cache_path.empty()) {
    w.report("fleet", doc.fleet_line,
             "a fleet member needs 'cache:' (the SQLite cache keeps the last map the fleet applied, so a proxy "
             "restarted while etcd is unreachable serves it)");
  }
  // A fleet's global ids are <xid_prefix>-<name>-<boot>-<n>; MariaDB allows
  // 64 bytes and <boot>-<n> takes up to 22 with their dashes.
  const auto& txn = doc.config.transactions;
  constexpr size_t kMaxPrefixAndName = 40;
  if (txn.cross_backend == CrossBackend::kAtomic &&
      txn.xid_prefix.size() + doc.config.fleet->name.size() > kMaxPrefixAndName) {
    w.report("fleet", doc.fleet_line,
             fmt::format("fleet.name '{}' and transactions.xid_prefix '{}' together exceed {} characters: the "
                         "global ids of cross-backend transactions (<xid_prefix>-<name>-...) would pass MariaDB's "
                         "64 bytes; shorten one",
                         doc.config.fleet->name, txn.xid_prefix, kMaxPrefixAndName));
  }
}

}  // namespace sp::conf::detail
