// Reading the fleet's JSON records (fleet_records, ha_records): one object,
// fields that may be absent (the default stays) but never of another type.
// Pure; Boost.JSON header-only (json_impl.cpp compiles it once).
#pragma once
#include <boost/json.hpp>

#include <expected>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sp::coord::json_fields {

namespace json = boost::json;

// The record as an object, or "malformed <what> record in etcd".
inline std::expected<json::object, std::string> parseObject(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::unexpected("malformed " + std::string(what) + " record in etcd");
  return std::move(v.as_object());
}

// "malformed <what> record in etcd: '<field>' has the wrong type".
inline std::string wrongType(std::string_view what, std::string_view field) {
  return "malformed " + std::string(what) + " record in etcd: '" + std::string(field) + "' has the wrong type";
}

// Each: true when the field is absent (out unchanged) or read; false when it
// has another type.
inline bool read(const json::object& o, std::string_view name, std::string& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  if (!it->value().is_string()) return false;
  out = it->value().as_string();
  return true;
}

// Integers: a negative value into an unsigned field is another type.
template <class Int>
bool read(const json::object& o, std::string_view name, Int& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  if (it->value().is_uint64()) out = static_cast<Int>(it->value().as_uint64());
  else if (it->value().is_int64() && (std::is_signed_v<Int> || it->value().as_int64() >= 0)) {
    out = static_cast<Int>(it->value().as_int64());
  } else {
    return false;
  }
  return true;
}

inline bool read(const json::object& o, std::string_view name, std::vector<std::string>& out) {
  auto it = o.find(name);
  if (it == o.end()) return true;
  if (!it->value().is_array()) return false;
  for (const auto& v : it->value().as_array()) {
    if (!v.is_string()) return false;
    out.emplace_back(v.as_string());
  }
  return true;
}

}  // namespace sp::coord::json_fields
