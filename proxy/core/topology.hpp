// Which server of each replication group serves as its primary now, and
// which replicate from it (docs/availability.md). The configuration names
// the servers and the initial roles (backends[].address is the primary,
// backends[].replicas its replicas); SWITCHOVER, FAILOVER and REJOIN change
// the roles at run time, the SQLite cache keeps them across restarts
// (proxy/ha/topology_store.hpp). Published whole in ProxyContext::topology,
// so every reader sees one consistent picture.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/backend_config.hpp"

namespace sp::conf {
struct Config;
}  // namespace sp::conf

namespace sp::proxy {

struct GroupTopology {
  std::string backend;                // the group: backends[].name
  std::string primary;                // a server name: backends[].name itself or one of its replicas[].name
  std::vector<std::string> replicas;  // replicating from the primary, serving reads
  // Demoted by a failover while unreachable: set read-only whenever it
  // answers, never sent a statement, until REJOIN BACKEND makes it a replica.
  std::vector<std::string> fenced;
  // The primary's GTID position when it was promoted (SWITCHOVER, FAILOVER):
  // a fenced server with anything beyond it holds writes the group never
  // had (its history diverged) and cannot REJOIN as it is.
  std::string promoted_at;
  int64_t changed_unix_ms = 0;  // 0: as configured
  std::string change;           // what made it so: "switchover db1 -> db1r1 (admin:root)"
  bool operator==(const GroupTopology&) const = default;
};

struct Topology {
  uint64_t version = 0;  // bumped by every change
  std::vector<GroupTopology> groups;
  const GroupTopology* find(std::string_view backend) const;
  GroupTopology* find(std::string_view backend);
};

// Server names comma-separated (names are identifiers: no commas), as
// SHOW TOPOLOGY shows them and the SQLite cache keeps them.
std::string joinServerNames(const std::vector<std::string>& names);

// The roles as the configuration gives them.
Topology topologyFromConfig(const conf::Config& config);

// The roles kept from before a restart (SQLite), checked against the
// configuration: a group whose saved servers are all still the backend's
// keeps its saved roles (servers the config added since join as replicas);
// otherwise the configuration's roles apply and `warnings` says why.
Topology restoreTopology(const conf::Config& config, const std::vector<GroupTopology>& saved,
                         std::vector<std::string>& warnings);

// Whether `server` is one of `backend`'s servers (its own name or a replica's).
bool isServerOf(const conf::BackendConfig& backend, std::string_view server);

// How the proxy logs in to one server of a backend: the backend's settings
// (pools, timeouts, TLS, database) with that server's name, address and
// account. nullopt: no such server.
std::optional<conf::BackendConfig> serverLogin(const conf::BackendConfig& backend, std::string_view server);

// The settings of a backend's pool now: its current primary's login under
// the backend's own name (pools and plans know backends by name), with the
// current replicas as `replicas`. nullopt: unknown backend.
std::optional<conf::BackendConfig> primaryPoolConfig(const conf::Config& config, const Topology& topology,
                                                     std::string_view backend);

// Logins of a backend's current replicas (each under its server name).
std::vector<conf::BackendConfig> replicaLogins(const conf::Config& config, const Topology& topology,
                                               std::string_view backend);

}  // namespace sp::proxy
