#include "coord/fleet_records.hpp"

#include <boost/json.hpp>

namespace sp::coord {

namespace json = boost::json;

namespace {

std::expected<json::object, std::string> parseObject(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::unexpected("malformed " + std::string(what) + " record in etcd");
  return std::move(v.as_object());
}

bool readString(const json::object& o, std::string_view name, std::string& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  if (!it->value().is_string()) return false;
  out = it->value().as_string();
  return true;
}

template <class Int>
bool readInt(const json::object& o, std::string_view name, Int& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  if (it->value().is_uint64()) out = static_cast<Int>(it->value().as_uint64());
  else if (it->value().is_int64()) out = static_cast<Int>(it->value().as_int64());
  else return false;
  return true;
}

std::string withoutTrailingSlash(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix);
}

}  // namespace

std::string mapKey(std::string_view prefix) { return withoutTrailingSlash(prefix) + "/map"; }
std::string membersPrefix(std::string_view prefix) { return withoutTrailingSlash(prefix) + "/proxies/"; }
std::string memberKey(std::string_view prefix, std::string_view name) { return membersPrefix(prefix) + std::string(name); }

std::string encodePublishedMap(const PublishedMap& map) {
  json::object o;
  o["version"] = map.version;
  o["checksum"] = map.checksum;
  o["published_by"] = map.published_by;
  o["note"] = map.note;
  o["source"] = map.source;
  return json::serialize(o);
}

std::expected<PublishedMap, std::string> decodePublishedMap(std::string_view text) {
  auto o = parseObject(text, "map");
  if (!o) return std::unexpected(o.error());
  PublishedMap m;
  if (!readInt(*o, "version", m.version) || !readString(*o, "checksum", m.checksum) ||
      !readString(*o, "source", m.source) || !readString(*o, "published_by", m.published_by) ||
      !readString(*o, "note", m.note)) {
    return std::unexpected("malformed map record in etcd: a field has the wrong type");
  }
  if (m.source.empty()) return std::unexpected("malformed map record in etcd: no 'source'");
  return m;
}

std::string encodeMemberRecord(const MemberRecord& member) {
  json::object o;
  o["name"] = member.name;
  o["admin"] = member.admin;
  o["version"] = member.version;
  o["checksum"] = member.checksum;
  o["applied_at"] = member.applied_at;
  o["map_revision"] = member.map_revision;
  return json::serialize(o);
}

std::expected<MemberRecord, std::string> decodeMemberRecord(std::string_view text) {
  auto o = parseObject(text, "proxy");
  if (!o) return std::unexpected(o.error());
  MemberRecord m;
  if (!readString(*o, "name", m.name) || !readString(*o, "admin", m.admin) || !readInt(*o, "version", m.version) ||
      !readString(*o, "checksum", m.checksum) || !readString(*o, "applied_at", m.applied_at) ||
      !readInt(*o, "map_revision", m.map_revision)) {
    return std::unexpected("malformed proxy record in etcd: a field has the wrong type");
  }
  return m;
}

}  // namespace sp::coord
