#include "coord/limit_records.hpp"

#include "coord/base64.hpp"
#include "coord/json_fields.hpp"

namespace sp::coord {

namespace json = boost::json;

std::string limitsPrefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix) + "/limits/";
}

// The name in base64: a digest holds any character, '/' and quotes included.
std::string limitKey(std::string_view prefix, std::string_view kind, std::string_view name) {
  return limitsPrefix(prefix) + std::string(kind) + "/" + base64Encode(name);
}

bool isLimitKey(std::string_view prefix, std::string_view key) { return key.starts_with(limitsPrefix(prefix)); }

std::string encodeLimitRecord(const LimitRecord& record) {
  json::object o;
  o["kind"] = record.kind;
  o["name"] = record.name;
  o["max_per_second"] = record.max_per_second;
  o["max_concurrent"] = record.max_concurrent;
  o["set_by"] = record.set_by;
  o["set_at"] = record.set_at;
  return json::serialize(o);
}

std::expected<LimitRecord, std::string> decodeLimitRecord(std::string_view text) {
  constexpr std::string_view kWhat = "statement limit";
  auto o = json_fields::parseObject(text, kWhat);
  if (!o) return std::unexpected(o.error());
  LimitRecord r;
  for (auto [name, field] : {std::pair{"kind", &r.kind}, {"name", &r.name}, {"set_by", &r.set_by},
                             {"set_at", &r.set_at}}) {
    if (!json_fields::read(*o, name, *field)) return std::unexpected(json_fields::wrongType(kWhat, name));
  }
  for (auto [name, field] : {std::pair{"max_per_second", &r.max_per_second}, {"max_concurrent", &r.max_concurrent}}) {
    if (!json_fields::read(*o, name, *field)) return std::unexpected(json_fields::wrongType(kWhat, name));
  }
  if (r.kind != "user" && r.kind != "digest") {
    return std::unexpected("malformed statement limit record in etcd: 'kind' is neither user nor digest");
  }
  if (r.name.empty()) return std::unexpected("malformed statement limit record in etcd: no 'name'");
  return r;
}

}  // namespace sp::coord
