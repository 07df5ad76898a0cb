#include "coord/fleet_records.hpp"

#include "coord/json_fields.hpp"

#include <type_traits>
#include <variant>

namespace sp::coord {

namespace json = boost::json;

namespace {

using json_fields::parseObject;

bool readString(const json::object& o, std::string_view name, std::string& out) {
  return json_fields::read(o, name, out);
}

template <class Int>
bool readInt(const json::object& o, std::string_view name, Int& out) {
  return json_fields::read(o, name, out);
}

// One JSON field of a record: its name and the member it holds.
template <class T>
struct Field {
  std::string_view name;
  std::variant<std::string T::*, uint64_t T::*, int64_t T::*> member;
};

const Field<PublishedMap> kMapFields[] = {
    {"version", &PublishedMap::version}, {"checksum", &PublishedMap::checksum},
    {"published_by", &PublishedMap::published_by}, {"note", &PublishedMap::note}, {"source", &PublishedMap::source},
};
const Field<MemberRecord> kMemberFields[] = {
    {"name", &MemberRecord::name},         {"admin", &MemberRecord::admin},
    {"version", &MemberRecord::version},   {"checksum", &MemberRecord::checksum},
    {"applied_at", &MemberRecord::applied_at}, {"map_revision", &MemberRecord::map_revision},
};

template <class T, size_t N>
std::string encodeRecord(const T& record, const Field<T> (&fields)[N]) {
  json::object o;
  for (const auto& f : fields) {
    std::visit([&](auto member) { o[f.name] = record.*member; }, f.member);
  }
  return json::serialize(o);
}

// Absent fields keep their defaults; a field of the wrong type is an error.
template <class T, size_t N>
std::expected<T, std::string> decodeRecord(std::string_view text, const Field<T> (&fields)[N], std::string_view what) {
  auto o = parseObject(text, what);
  if (!o) return std::unexpected(o.error());
  T record{};
  for (const auto& f : fields) {
    bool ok = std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), std::string T::*>) return readString(*o, f.name, record.*member);
          else return readInt(*o, f.name, record.*member);
        },
        f.member);
    if (!ok) return std::unexpected("malformed " + std::string(what) + " record in etcd: '" + std::string(f.name) +
                                    "' has the wrong type");
  }
  return record;
}

std::string withoutTrailingSlash(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix);
}

}  // namespace

std::string mapKey(std::string_view prefix) { return withoutTrailingSlash(prefix) + "/map"; }
std::string membersPrefix(std::string_view prefix) { return withoutTrailingSlash(prefix) + "/proxies/"; }
std::string memberKey(std::string_view prefix, std::string_view name) { return membersPrefix(prefix) + std::string(name); }

std::string encodePublishedMap(const PublishedMap& map) { return encodeRecord(map, kMapFields); }

std::expected<PublishedMap, std::string> decodePublishedMap(std::string_view text) {
  auto m = decodeRecord(text, kMapFields, "map");
  if (m && m->source.empty()) return std::unexpected("malformed map record in etcd: no 'source'");
  return m;
}

std::string encodeMemberRecord(const MemberRecord& member) { return encodeRecord(member, kMemberFields); }

std::expected<MemberRecord, std::string> decodeMemberRecord(std::string_view text) {
  return decodeRecord(text, kMemberFields, "proxy");
}

}  // namespace sp::coord
