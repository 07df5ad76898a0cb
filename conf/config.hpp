// The proxy's YAML configuration (the contract documented in docs/configuration.md):
// the whole of it and its loaders. Each section has a header of its own
// (conf/server_config.hpp, conf/backend_config.hpp, ...): code that reads one
// section includes that one, so a change here rebuilds only what needs the whole.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/backend_config.hpp"
#include "conf/config_issue.hpp"
#include "conf/fleet_config.hpp"
#include "conf/ha_config.hpp"
#include "conf/host_port.hpp"
#include "conf/lifecycle_config.hpp"
#include "conf/limits_config.hpp"
#include "conf/moves_config.hpp"
#include "conf/observe_config.hpp"
#include "conf/overload_config.hpp"
#include "conf/scatter_config.hpp"
#include "conf/background_config.hpp"
#include "conf/changes_config.hpp"
#include "conf/schema_config.hpp"
#include "conf/statement_limits_config.hpp"
#include "conf/transactions_config.hpp"
#include "conf/server_config.hpp"
#include "conf/user_account.hpp"

namespace sp::conf {

struct Config {
  ServerConfig server;
  MovesConfig moves;
  SchemaConfig schema;  // DDL on logical tables
  std::vector<StatementLimitRule> statement_limits;  // per user / per digest
  BackgroundConfig background;  // when moves, archiving, upkeep and schema changes yield
  std::optional<FleetConfig> fleet;
  PartitionsConfig partitions;
  ArchiveConfig archive;
  LogConfig log;
  DigestsConfig digests;
  LimitsConfig limits;
  ScatterConfig scatter;
  ChangesConfig changes;  // the change stream of logical tables (docs/changes.md)
  TransactionsConfig transactions;  // cross-backend transactions (two-phase commit)
  OverloadConfig overload;  // waiting for backends[].max_active_statements
  HaConfig ha;
  std::vector<UserAccount> users;
  std::vector<UserAccount> admin_users;
  std::vector<BackendConfig> backends;
  std::string shard_map_path;   // absolute (resolved relative to the config file); may be empty
  std::string default_backend;
  std::string cache_path;       // SQLite cache of applied shard maps; may be empty
  std::string source_path;      // the file this was loaded from

  const BackendConfig* findBackend(std::string_view name) const;
  const UserAccount* findUser(std::string_view name) const;
  // users[].max_pinned_connections, else limits.max_pinned_connections_per_user (0 = no limit).
  uint32_t pinnedConnectionLimit(std::string_view user) const;
};

// Reads, parses and validates; reports every problem found, not only the first.
std::expected<Config, ConfigIssues> loadConfig(const std::string& file_path);
// Same, from text; relative paths resolve against base_dir.
std::expected<Config, ConfigIssues> parseConfig(std::string_view yaml_text, const std::string& base_dir);
// "file:line: path: message" lines, one per issue.
std::string formatIssues(const ConfigIssues& issues, std::string_view file_name);

}  // namespace sp::conf
