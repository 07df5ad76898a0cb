#include "coord/ha_records.hpp"

#include "coord/json_fields.hpp"

namespace sp::coord {

namespace json = boost::json;

namespace {

std::string haBase(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix);
}

using json_fields::parseObject;
using json_fields::read;
using json_fields::wrongType;

json::array names(const std::vector<std::string>& list) {
  json::array a;
  for (const auto& n : list) a.emplace_back(n);
  return a;
}

std::expected<RoleGroupRecord, std::string> decodeGroup(const json::value& v) {
  if (!v.is_object()) return std::unexpected("malformed topology record in etcd: a group is not an object");
  const auto& o = v.as_object();
  RoleGroupRecord g;
  if (!read(o, "backend", g.backend)) return std::unexpected(wrongType("topology", "backend"));
  if (!read(o, "primary", g.primary)) return std::unexpected(wrongType("topology", "primary"));
  if (!read(o, "replicas", g.replicas)) return std::unexpected(wrongType("topology", "replicas"));
  if (!read(o, "fenced", g.fenced)) return std::unexpected(wrongType("topology", "fenced"));
  if (!read(o, "promoted_at", g.promoted_at)) return std::unexpected(wrongType("topology", "promoted_at"));
  if (!read(o, "changed_unix_ms", g.changed_unix_ms)) return std::unexpected(wrongType("topology", "changed_unix_ms"));
  if (!read(o, "change", g.change)) return std::unexpected(wrongType("topology", "change"));
  if (g.backend.empty() || g.primary.empty()) {
    return std::unexpected("malformed topology record in etcd: a group without 'backend' or 'primary'");
  }
  return g;
}

}  // namespace

std::string haPrefix(std::string_view prefix) { return haBase(prefix) + "/ha/"; }
std::string haTopologyKey(std::string_view prefix) { return haPrefix(prefix) + "topology"; }
std::string haChangeKey(std::string_view prefix) { return haPrefix(prefix) + "change"; }
std::string haLeaderKey(std::string_view prefix) { return haPrefix(prefix) + "leader"; }
std::string haAckPrefix(std::string_view prefix) { return haPrefix(prefix) + "ack/"; }
std::string haAckKey(std::string_view prefix, std::string_view proxy) { return haAckPrefix(prefix) + std::string(proxy); }

std::optional<HaKeyRef> parseHaKey(std::string_view prefix, std::string_view key) {
  const std::string root = haPrefix(prefix);
  if (!key.starts_with(root)) return std::nullopt;
  std::string_view rest = key.substr(root.size());
  if (rest == "topology") return HaKeyRef{HaKeyRef::Kind::kTopology, {}};
  if (rest == "change") return HaKeyRef{HaKeyRef::Kind::kChange, {}};
  if (rest == "leader") return HaKeyRef{HaKeyRef::Kind::kLeader, {}};
  if (rest.starts_with("ack/") && rest.size() > 4) return HaKeyRef{HaKeyRef::Kind::kAck, std::string(rest.substr(4))};
  return std::nullopt;
}

std::string encodeFleetTopology(const FleetTopologyRecord& record) {
  json::object o;
  o["version"] = record.version;
  o["published_by"] = record.published_by;
  json::array groups;
  for (const auto& g : record.groups) {
    json::object go;
    go["backend"] = g.backend;
    go["primary"] = g.primary;
    go["replicas"] = names(g.replicas);
    go["fenced"] = names(g.fenced);
    go["promoted_at"] = g.promoted_at;
    go["changed_unix_ms"] = g.changed_unix_ms;
    go["change"] = g.change;
    groups.emplace_back(std::move(go));
  }
  o["groups"] = std::move(groups);
  return json::serialize(o);
}

std::expected<FleetTopologyRecord, std::string> decodeFleetTopology(std::string_view text) {
  auto o = parseObject(text, "topology");
  if (!o) return std::unexpected(o.error());
  FleetTopologyRecord record;
  if (!read(*o, "version", record.version)) return std::unexpected(wrongType("topology", "version"));
  if (!read(*o, "published_by", record.published_by)) return std::unexpected(wrongType("topology", "published_by"));
  auto it = o->find("groups");
  if (it == o->end() || !it->value().is_array()) {
    return std::unexpected("malformed topology record in etcd: no 'groups' array");
  }
  for (const auto& v : it->value().as_array()) {
    auto g = decodeGroup(v);
    if (!g) return std::unexpected(g.error());
    record.groups.push_back(std::move(*g));
  }
  return record;
}

std::string encodeRoleChange(const RoleChangeRecord& record) {
  json::object o;
  o["backend"] = record.backend;
  o["kind"] = record.kind;
  o["proxy"] = record.proxy;
  o["who"] = record.who;
  o["hold_ms"] = record.hold_ms;
  return json::serialize(o);
}

std::expected<RoleChangeRecord, std::string> decodeRoleChange(std::string_view text) {
  auto o = parseObject(text, "role change");
  if (!o) return std::unexpected(o.error());
  RoleChangeRecord r;
  if (!read(*o, "backend", r.backend)) return std::unexpected(wrongType("role change", "backend"));
  if (!read(*o, "kind", r.kind)) return std::unexpected(wrongType("role change", "kind"));
  if (!read(*o, "proxy", r.proxy)) return std::unexpected(wrongType("role change", "proxy"));
  if (!read(*o, "who", r.who)) return std::unexpected(wrongType("role change", "who"));
  if (!read(*o, "hold_ms", r.hold_ms)) return std::unexpected(wrongType("role change", "hold_ms"));
  if (r.backend.empty() || r.proxy.empty()) {
    return std::unexpected("malformed role change record in etcd: no 'backend' or 'proxy'");
  }
  if (r.kind != "switchover" && r.kind != "failover" && r.kind != "rejoin") {
    return std::unexpected("malformed role change record in etcd: unknown kind '" + r.kind + "'");
  }
  return r;
}

}  // namespace sp::coord
