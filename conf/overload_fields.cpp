// The `overload:` section (docs/configuration.md): how statements wait for a
// server's concurrency budget (backends[].max_active_statements).
#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

// A wait longer than a minute holds a client that has likely given up.
constexpr uint64_t kMaxQueueTimeoutMs = 60'000;
constexpr uint64_t kMaxQueued = 1'000'000;
// Writes of one key in flight: beyond a few hundred the serialiser protects nothing.
constexpr uint64_t kMaxHotKeyConcurrency = 10'000;
// Writes per second of one key: above a million a turn is under a microsecond.
constexpr uint64_t kMaxHotKeyRate = 1'000'000;
// Counters per table of SHOW HOT KEYS: memory grows with it (tables x this).
constexpr uint64_t kMaxHotKeysTracked = 4096;

const FieldSpec<OverloadConfig> kOverloadFields[] = {
    {"queue_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxQueueTimeoutMs), o.queue_timeout_ms);
     }},
    {"max_queued_per_backend", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxQueued), o.max_queued_per_backend);
     }},
    {"hot_key_concurrency", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxHotKeyConcurrency), o.hot_key_concurrency);
     }},
    {"hot_key_max_queued", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxQueued), o.hot_key_max_queued);
     }},
    {"hot_key_max_per_second", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxHotKeyRate), o.hot_key_max_per_second);
     }},
    {"hot_keys_tracked", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxHotKeysTracked), o.hot_keys_tracked);
     }},
};

}  // namespace

void readOverload(Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& out) {
  if (v.IsNull()) return;
  readMapping<OverloadConfig>(w, v, p, kOverloadFields, out);
}

}  // namespace sp::conf::detail
