// The `overload:` section (docs/configuration.md): how statements wait for a
// server's concurrency budget (backends[].max_active_statements).
#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

// A wait longer than a minute holds a client that has likely given up.
constexpr uint64_t kMaxQueueTimeoutMs = 60'000;
constexpr uint64_t kMaxQueued = 1'000'000;

const FieldSpec<OverloadConfig> kOverloadFields[] = {
    {"queue_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxQueueTimeoutMs), o.queue_timeout_ms);
     }},
    {"max_queued_per_backend", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& o) {
       assign(w.readUInt(v, p, 0, kMaxQueued), o.max_queued_per_backend);
     }},
};

}  // namespace

void readOverload(Walker& w, const YAML::Node& v, const std::string& p, OverloadConfig& out) {
  if (v.IsNull()) return;
  readMapping<OverloadConfig>(w, v, p, kOverloadFields, out);
}

}  // namespace sp::conf::detail
