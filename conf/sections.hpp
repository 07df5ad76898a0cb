// Internal to conf/: the schema of the config file (one field table per section).
#pragma once
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "conf/yaml_walker.hpp"

namespace sp::conf::detail {

// A parsed file plus the lines the cross-field checks point at.
struct Document {
  Config config;
  std::string base_dir;               // where relative paths resolve
  std::vector<int> user_lines;        // line of each users[i].name
  std::vector<int> admin_user_lines;  // line of each admin_users[i].name
  std::vector<int> backend_lines;     // line of each backends[i].name
  std::vector<int> min_conn_lines;    // line of each backends[i].min_connections (0 = unset)
  std::vector<std::vector<int>> replica_lines;  // line of each backends[i].replicas[j].name
  bool has_default_backend = false;
  int default_backend_line = 0;
  int backends_line = 0;
  int admin_listen_line = 0;
  int metrics_listen_line = 0;
  int server_line = 0;
  int fleet_line = 0;  // the `server:` key, for server.tls_* issues
};

// backends[].tls (tls_fields.cpp): a mapping {ca, verify, server_name, cert, key}.
void readBackendTls(Walker& walker, const YAML::Node& value, const std::string& path,
                    std::optional<BackendTls>& out);
// Makes the TLS file paths absolute (relative to the config file's directory).
void resolveTlsPaths(Config& config, const std::string& base_dir);
// TLS checks across keys: cert and key together, require_tls needs server TLS.
void checkTls(Walker& walker, const Document& doc);

// fleet: (fleet_fields.cpp): name and the etcd endpoints, prefix and timings.
void readFleet(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc);
// fleet: needs cache: (the last fleet map survives a restart during an etcd outage).
void checkFleet(Walker& walker, const Document& doc);

// users: and admin_users: (user_fields.cpp): each a list of accounts, with
// the line of every name for the cross-field checks.
void readUsers(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc);
void readAdminUsers(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc);

// ha: and backends[].replicas (ha_fields.cpp), and the check that every
// server, primary or replica, has its own name and address.
void readHa(Walker& walker, const YAML::Node& value, const std::string& path, HaConfig& out);
void readReplicas(Walker& walker, const YAML::Node& list, const std::string& path, std::vector<ReplicaConfig>& out,
                  std::vector<int>& name_lines);
void checkServers(Walker& walker, const Document& doc);
// background: (background_fields.cpp): when background work yields to the foreground.
void readBackground(Walker& walker, const YAML::Node& value, const std::string& path, BackgroundConfig& out);
// changes: (changes_fields.cpp): the change stream of logical tables.
void readChanges(Walker& walker, const YAML::Node& value, const std::string& path, ChangesConfig& out);
// overload: (overload_fields.cpp): how statements wait for a server's budget.
void readOverload(Walker& walker, const YAML::Node& value, const std::string& path, OverloadConfig& out);
// statement_limits: (statement_limits_fields.cpp): rate and concurrency per user or digest.
void readStatementLimits(Walker& walker, const YAML::Node& list, const std::string& path,
                         std::vector<StatementLimitRule>& out);
// transactions: (transactions_fields.cpp): cross-backend transactions.
void readTransactions(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc);
// Reads the top-level mapping; every schema problem is reported to the walker.
void readDocument(Walker& walker, const YAML::Node& root, Document& doc);

inline constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn",
                                                  "error", "critical", "off"};

}  // namespace sp::conf::detail
