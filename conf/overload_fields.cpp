// The `overload:` section (docs/configuration.md): how statements wait for a
// server's concurrency budget (backends[].max_active_statements).
#include <algorithm>

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
// The hot-key policy: a day of sustain or a week of cooldown is already "never".
constexpr uint64_t kMaxSustainSeconds = 86'400;
constexpr uint64_t kMaxCooldownSeconds = 604'800;
// Below ten seconds between moves a failing move would be retried in a loop.
constexpr uint64_t kMinCooldownSeconds = 10;

void readTargetShards(Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) {
  if (v.IsNull()) return;
  if (!w.expectSequence(v, p)) return;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", p, i);
    std::string name;
    readName(w, v[i], item, name);
    if (name.empty()) continue;
    if (std::find(a.target_shards.begin(), a.target_shards.end(), name) != a.target_shards.end()) {
      w.report(item, v[i], fmt::format("shard '{}' is listed twice", name));
      continue;
    }
    a.target_shards.push_back(std::move(name));
  }
}

const FieldSpec<HotKeyAutoMoveConfig> kAutoMoveFields[] = {
    {"enabled", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) { readBool(w, v, p, a.enabled); }},
    {"min_shard_share_pct", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) {
       assign(w.readUInt(v, p, 1, 100), a.min_shard_share_pct);
     }},
    {"min_statements_per_second", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) {
       assign(w.readUInt(v, p, 1, kMaxHotKeyRate), a.min_statements_per_second);
     }},
    {"sustain_seconds", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) {
       assign(w.readUInt(v, p, 1, kMaxSustainSeconds), a.sustain_seconds);
     }},
    {"cooldown_seconds", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, HotKeyAutoMoveConfig& a) {
       assign(w.readUInt(v, p, kMinCooldownSeconds, kMaxCooldownSeconds), a.cooldown_seconds);
     }},
    {"target_shards", false, readTargetShards},
};

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
    {"hot_key_auto_move", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       if (v.IsNull()) return;
       readMapping<HotKeyAutoMoveConfig>(w, v, p, kAutoMoveFields, o.hot_key_auto_move);
     }},
};

}  // namespace

void readOverload(Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& out) {
  if (v.IsNull()) return;
  readMapping<OverloadConfig>(w, v, p, kOverloadFields, out);
  if (out.hot_key_auto_move.enabled && out.hot_keys_tracked == 0) {
    // The policy judges from SHOW HOT KEYS' counters: with none it would never act, silently.
    w.report(joinPath(p, "hot_key_auto_move.enabled"), v["hot_key_auto_move"]["enabled"],
             "needs overload.hot_keys_tracked above 0: the policy judges keys from its counters");
  }
}

}  // namespace sp::conf::detail
