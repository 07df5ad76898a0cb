#include "coord/schema_records.hpp"

#include "coord/json_fields.hpp"

namespace sp::coord {

namespace json = boost::json;

namespace {

using json_fields::parseObject;
using json_fields::read;
using json_fields::wrongType;

std::string schemaBase(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix);
}

// A number field (seconds): integers are numbers too.
bool readNumber(const json::object& o, std::string_view name, double& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  const json::value& v = it->value();
  if (v.is_double()) out = v.as_double();
  else if (v.is_int64()) out = static_cast<double>(v.as_int64());
  else if (v.is_uint64()) out = static_cast<double>(v.as_uint64());
  else return false;
  return true;
}

std::expected<SchemaTableFleetRecord, std::string> decodeTable(const json::value& v) {
  constexpr std::string_view kWhat = "schema change";
  if (!v.is_object()) return std::unexpected("malformed schema change record in etcd: a table is not an object");
  const auto& o = v.as_object();
  SchemaTableFleetRecord t;
  for (auto [name, field] : {std::pair{"backend", &t.backend}, {"table", &t.table}, {"role", &t.role},
                             {"state", &t.state}, {"algorithm", &t.algorithm}, {"error", &t.error}}) {
    if (!read(o, name, *field)) return std::unexpected(wrongType(kWhat, name));
  }
  if (!readNumber(o, "seconds", t.seconds)) return std::unexpected(wrongType(kWhat, "seconds"));
  if (t.backend.empty() || t.table.empty()) {
    return std::unexpected("malformed schema change record in etcd: a table without 'backend' or 'table'");
  }
  return t;
}

}  // namespace

std::string schemaPrefix(std::string_view prefix) { return schemaBase(prefix) + "/schema/"; }
std::string schemaClaimPrefix(std::string_view prefix) { return schemaPrefix(prefix) + "claim/"; }
std::string schemaClaimKey(std::string_view prefix, std::string_view table) {
  return schemaClaimPrefix(prefix) + std::string(table);
}
std::string schemaChangesPrefix(std::string_view prefix) { return schemaPrefix(prefix) + "changes/"; }
std::string schemaChangeKey(std::string_view prefix, std::string_view proxy, int64_t id) {
  return schemaChangesPrefix(prefix) + std::string(proxy) + "/" + std::to_string(id);
}

std::string schemaAdoptedPrefix(std::string_view prefix) { return schemaPrefix(prefix) + "adopted/"; }
std::string schemaAdoptedKey(std::string_view prefix, std::string_view proxy, int64_t id) {
  return schemaAdoptedPrefix(prefix) + std::string(proxy) + "/" + std::to_string(id);
}

std::string encodeSchemaClaim(const SchemaClaimRecord& record) {
  json::object o;
  o["proxy"] = record.proxy;
  o["change_id"] = record.change_id;
  o["statement"] = record.statement;
  o["who"] = record.who;
  return json::serialize(o);
}

std::expected<SchemaClaimRecord, std::string> decodeSchemaClaim(std::string_view text) {
  constexpr std::string_view kWhat = "schema claim";
  auto o = parseObject(text, kWhat);
  if (!o) return std::unexpected(o.error());
  SchemaClaimRecord r;
  if (!read(*o, "proxy", r.proxy)) return std::unexpected(wrongType(kWhat, "proxy"));
  if (!read(*o, "change_id", r.change_id)) return std::unexpected(wrongType(kWhat, "change_id"));
  if (!read(*o, "statement", r.statement)) return std::unexpected(wrongType(kWhat, "statement"));
  if (!read(*o, "who", r.who)) return std::unexpected(wrongType(kWhat, "who"));
  if (r.proxy.empty() || r.change_id < 0) {
    return std::unexpected("malformed schema claim record in etcd: no 'proxy' or a negative 'change_id'");
  }
  return r;
}

std::string encodeSchemaChange(const SchemaChangeFleetRecord& record) {
  json::object o;
  o["proxy"] = record.proxy;
  o["id"] = record.id;
  o["table"] = record.table;
  o["kind"] = record.kind;
  o["statement"] = record.statement;
  o["state"] = record.state;
  o["message"] = record.message;
  o["shapes_before"] = record.shapes_before;
  o["created_by"] = record.created_by;
  o["created_at"] = record.created_at;
  o["updated_at"] = record.updated_at;
  json::array tables;
  for (const auto& t : record.tables) {
    json::object to;
    to["backend"] = t.backend;
    to["table"] = t.table;
    to["role"] = t.role;
    to["state"] = t.state;
    to["algorithm"] = t.algorithm;
    to["seconds"] = t.seconds;
    to["error"] = t.error;
    tables.emplace_back(std::move(to));
  }
  o["tables"] = std::move(tables);
  return json::serialize(o);
}

std::expected<SchemaChangeFleetRecord, std::string> decodeSchemaChange(std::string_view text) {
  constexpr std::string_view kWhat = "schema change";
  auto o = parseObject(text, kWhat);
  if (!o) return std::unexpected(o.error());
  SchemaChangeFleetRecord r;
  if (!read(*o, "id", r.id)) return std::unexpected(wrongType(kWhat, "id"));
  for (auto [name, field] :
       {std::pair{"proxy", &r.proxy}, {"table", &r.table}, {"kind", &r.kind}, {"statement", &r.statement},
        {"state", &r.state}, {"message", &r.message}, {"shapes_before", &r.shapes_before},
        {"created_by", &r.created_by}, {"created_at", &r.created_at}, {"updated_at", &r.updated_at}}) {
    if (!read(*o, name, *field)) return std::unexpected(wrongType(kWhat, name));
  }
  if (r.proxy.empty() || r.id <= 0 || r.table.empty()) {
    return std::unexpected("malformed schema change record in etcd: no 'proxy', 'id' or 'table'");
  }
  if (auto it = o->find("tables"); it != o->end()) {
    if (!it->value().is_array()) return std::unexpected(wrongType(kWhat, "tables"));
    for (const auto& v : it->value().as_array()) {
      auto t = decodeTable(v);
      if (!t) return std::unexpected(t.error());
      r.tables.push_back(std::move(*t));
    }
  }
  return r;
}

}  // namespace sp::coord
