// The `changes:` keys (docs/configuration.md, "changes").
#include "conf/changes_config.hpp"

#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

constexpr std::string_view kSources[] = {"replicas", "primary"};

void readTables(Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
  if (v.IsNull()) return;
  if (!w.expectSequence(v, p)) return;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string name;
    readName(w, v[i], p + "[" + std::to_string(i) + "]", name);
    if (!name.empty()) c.tables.push_back(std::move(name));
  }
}

constexpr FieldSpec<ChangesConfig> kChangesFields[] = {
    {"enabled", false, [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) { readBool(w, v, p, c.enabled); }},
    {"listen", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       if (v.IsNull()) return;
       if (auto hp = w.readHostPort(v, p)) c.listen = *hp;
     }},
    {"tables", false, readTables},
    {"source", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       if (auto s = w.readChoice(v, p, kSources)) c.source = *s;
     }},
    {"max_events_per_second", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 0, 10'000'000), c.max_events_per_second);
     }},
    {"max_consumers", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 1, 1000), c.max_consumers);
     }},
    {"buffer_events", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 1, 1'000'000), c.buffer_events);
     }},
    {"max_transaction_events", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 1, 10'000'000), c.max_transaction_events);
     }},
    {"heartbeat_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 100, 60'000), c.heartbeat_ms);
     }},
    {"send_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 100, 3'600'000), c.send_timeout_ms);
     }},
    {"allow_remote", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) { readBool(w, v, p, c.allow_remote); }},
    {"replica_server_id", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& c) {
       assign(w.readUInt(v, p, 1, 4'000'000'000u), c.replica_server_id);
     }},
};

}  // namespace

void readChanges(Walker& w, const YAML::Node& v, const std::string& p, ChangesConfig& out) {
  if (v.IsNull()) return;
  readMapping<ChangesConfig>(w, v, p, kChangesFields, out);
  if (out.listen) out.enabled = true;
}

}  // namespace sp::conf::detail
