// The availability keys (docs/availability.md): `ha:`, backends[].replicas
// and the checks across them (every server name and address once).
#include <fmt/format.h>

#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

constexpr uint64_t kMinIntervalMs = 50;
constexpr uint64_t kMaxIntervalMs = 600'000;
constexpr uint64_t kMaxWaitMs = 3'600'000;
constexpr size_t kMaxReplicas = 16;

template <uint32_t HaConfig::*Member, uint64_t Min, uint64_t Max>
void readHaUInt(Walker& w, const YAML::Node& v, const std::string& p, HaConfig& ha) {
  assign(w.readUInt(v, p, Min, Max), ha.*Member);
}

const FieldSpec<HaConfig> kHaFields[] = {
    {"check_interval_ms", false, readHaUInt<&HaConfig::check_interval_ms, kMinIntervalMs, kMaxIntervalMs>},
    {"probe_timeout_ms", false, readHaUInt<&HaConfig::probe_timeout_ms, kMinIntervalMs, kMaxIntervalMs>},
    {"max_replica_lag_ms", false, readHaUInt<&HaConfig::max_replica_lag_ms, 0, kMaxWaitMs>},
    {"causal_read_timeout_ms", false, readHaUInt<&HaConfig::causal_read_timeout_ms, 0, kMaxWaitMs>},
    {"failure_timeout_ms", false, readHaUInt<&HaConfig::failure_timeout_ms, kMinIntervalMs, kMaxWaitMs>},
    {"auto_failover", false, [](Walker& w, const YAML::Node& v, const std::string& p, HaConfig& ha) {
       readBool(w, v, p, ha.auto_failover);
     }},
    {"switchover_timeout_ms", false, readHaUInt<&HaConfig::switchover_timeout_ms, kMinIntervalMs, kMaxWaitMs>},
};

struct ReplicaEntry {
  ReplicaConfig replica;
  int name_line = 0;
};

const FieldSpec<ReplicaEntry> kReplicaFields[] = {
    {"name", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, ReplicaEntry& r) {
       r.name_line = lineOf(v);
       readName(w, v, p, r.replica.name);
     }},
    {"address", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, ReplicaEntry& r) {
       if (auto hp = w.readHostPort(v, p)) r.replica.address = *hp;
     }},
    {"user", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ReplicaEntry& r) {
       readStringInto(w, v, p, r.replica.user, NullIs::kEmpty, false);
     }},
    {"password", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ReplicaEntry& r) {
       readStringInto(w, v, p, r.replica.password, NullIs::kEmpty, true);
     }},
    {"max_active_statements", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ReplicaEntry& r) {
       if (auto n = w.readUInt(v, p, 0, kMaxActiveStatements)) r.replica.max_active_statements = static_cast<uint32_t>(*n);
     }},
};

bool sameAddress(const HostPort& a, const HostPort& b) { return a.port == b.port && a.host == b.host; }

}  // namespace

void readHa(Walker& w, const YAML::Node& v, const std::string& p, HaConfig& out) {
  if (v.IsNull()) return;
  readMapping<HaConfig>(w, v, p, kHaFields, out);
}

void readReplicas(Walker& w, const YAML::Node& list, const std::string& path, std::vector<ReplicaConfig>& out,
                  std::vector<int>& name_lines) {
  if (list.IsNull()) return;
  if (!w.expectSequence(list, path)) return;
  if (list.size() > kMaxReplicas) {
    w.report(path, list, fmt::format("{} replicas; at most {} per backend", list.size(), kMaxReplicas));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    ReplicaEntry entry;
    readMapping<ReplicaEntry>(w, list[i], fmt::format("{}[{}]", path, i), kReplicaFields, entry);
    out.push_back(std::move(entry.replica));
    name_lines.push_back(entry.name_line);
  }
}

void checkServers(Walker& w, const Document& doc) {
  // Every server, primary or replica, has one name and one address: the name
  // appears in SHOW BACKENDS, metrics and SWITCHOVER; an address listed twice
  // would make one server both a primary and a replica.
  struct Server {
    std::string path;
    const std::string* name;
    const HostPort* address;
    int line;
  };
  std::vector<Server> servers;
  const auto& backends = doc.config.backends;
  for (size_t i = 0; i < backends.size(); ++i) {
    servers.push_back({fmt::format("backends[{}]", i), &backends[i].name, &backends[i].address,
                       i < doc.backend_lines.size() ? doc.backend_lines[i] : 0});
    for (size_t j = 0; j < backends[i].replicas.size(); ++j) {
      const auto& lines = i < doc.replica_lines.size() ? doc.replica_lines[i] : std::vector<int>{};
      servers.push_back({fmt::format("backends[{}].replicas[{}]", i, j), &backends[i].replicas[j].name,
                         &backends[i].replicas[j].address, j < lines.size() ? lines[j] : 0});
    }
  }
  for (size_t i = 0; i < servers.size(); ++i) {
    bool is_replica = servers[i].path.find(".replicas[") != std::string::npos;
    for (size_t k = 0; k < i; ++k) {
      if (is_replica && !servers[i].name->empty() && *servers[k].name == *servers[i].name) {
        w.report(servers[i].path + ".name", servers[i].line,
                 fmt::format("server name '{}' is already used by {}", *servers[i].name, servers[k].path));
        break;
      }
      if (!servers[i].address->host.empty() && sameAddress(*servers[k].address, *servers[i].address) &&
          (is_replica || servers[k].path.find(".replicas[") != std::string::npos)) {
        w.report(servers[i].path + ".address", servers[i].line,
                 fmt::format("address {} is already {}", formatHostPort(*servers[i].address), servers[k].path));
        break;
      }
    }
  }
}

}  // namespace sp::conf::detail
