// The proxy's YAML configuration (the contract documented in docs/configuration.md).
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/ha_config.hpp"
#include "conf/host_port.hpp"

namespace sp::conf {

struct ServerConfig {
  HostPort listen{"127.0.0.1", 6033};
  std::optional<HostPort> admin_listen;   // bound by the shard-map lifecycle work
  bool admin_allow_remote = false;        // accept admin logins from non-loopback peers (still admin_users only)
  std::optional<HostPort> metrics_listen; // Prometheus /metrics over HTTP; absent = off
  bool metrics_allow_remote = false;      // answer scrapes from non-loopback peers
  unsigned threads = 0;                   // 0 = number of cores
  uint32_t max_connections = 10000;
  uint32_t max_packet_bytes = 64u << 20;
  uint32_t shutdown_grace_ms = 10000;     // SIGTERM: wait this long for in-flight statements
  // Before authentication (hostile clients: docs/configuration.md).
  uint32_t handshake_timeout_ms = 10000;       // login must complete within this, else the socket is closed
  uint32_t max_handshake_packet_bytes = 16384; // largest packet accepted before login
  uint32_t max_connections_per_host = 0;       // client connections from one address; 0 = no limit
  uint32_t wait_timeout_s = 28800;             // an idle logged-in session is closed after this
  uint32_t interactive_timeout_s = 28800;      // the same, for clients that log in with CLIENT_INTERACTIVE
  uint32_t net_write_timeout_s = 60;           // a client that takes no bytes for this long while we write is closed
  uint32_t net_read_timeout_s = 30;            // a client sending a LOAD DATA LOCAL file that stalls this long is cut
  std::string log_level = "info";         // trace|debug|info|warn|error|critical|off
  // TLS for clients (application and admin ports): PEM files, absolute after
  // loading; both or neither. Re-read on SIGHUP (docs/security.md, "TLS").
  std::string tls_cert;
  std::string tls_key;
  // Protocol versions offered to clients (MariaDB's tls_version): TLS 1.2
  // and/or 1.3; older ones are never offered.
  bool tls_v12 = true;
  bool tls_v13 = true;
  // OpenSSL cipher names (MariaDB's ssl_cipher): TLS 1.3 suites (TLS_...)
  // and TLS 1.2 ciphers in one colon-separated list; empty = OpenSSL's defaults.
  std::string tls_ciphers;
  // PEM CA bundle client certificates are verified against (MariaDB's
  // ssl_ca); empty = clients are not asked for one. Needs tls_cert.
  std::string tls_ca;
  bool tlsEnabled() const { return !tls_cert.empty(); }
};

struct UserAccount {
  std::string name;
  // Exactly one of the two (docs/configuration.md): the clear text, or the
  // mysql_native_password hash "*" + 40 upper-case hex digits, SHA1(SHA1(pw)),
  // as MariaDB's PASSWORD() prints it (`shardproxy --hash-password`).
  std::string password;
  std::string password_hash;
  bool allow_empty_password = false;  // else an empty or missing password is a config error
  std::string default_database;  // may be empty
  bool require_tls = false;      // plaintext logins refused (1045, as MariaDB's REQUIRE SSL)
  // Client certificate (MariaDB's REQUIRE X509 / SUBJECT / ISSUER); each
  // implies TLS and a certificate verified against server.tls_ca. Subject and
  // issuer are compared whole with the X509_NAME one-line form ("/C=../CN=..").
  bool require_x509 = false;
  std::string require_subject;  // empty: any subject
  std::string require_issuer;   // empty: any issuer
  bool requiresCertificate() const { return require_x509 || !require_subject.empty() || !require_issuer.empty(); }
  uint32_t max_connections = 0;  // sessions of this user at once; 0 = no limit (users only)
  // Backend connections this user's pinned sessions may hold at once (users
  // only); nullopt = limits.max_pinned_connections_per_user; 0 = no limit.
  std::optional<uint32_t> max_pinned_connections;
  // Statement policy (docs/security.md); `users` only, not `admin_users`.
  bool privileged = false;       // DBA account: no statement policy, physical tables allowed
  bool allow_ddl = false;        // CREATE / ALTER / DROP / TRUNCATE / RENAME of tables, views, routines, ...
  bool physical_tables = false;  // may name physical shard tables (msg_05) directly
  bool local_infile = false;     // may LOAD DATA LOCAL INFILE (the client sends a file through the proxy)
  // Allow lists (docs/security.md): absent = no restriction. Schemas by
  // name; tables as `table` or `schema.table`; `*` matches any characters.
  std::optional<std::vector<std::string>> allow_schemas;
  std::optional<std::vector<std::string>> allow_tables;
  ReadTarget reads = ReadTarget::kPrimary;  // users only; a session may change it (docs/availability.md)
};

// TLS from the proxy to one backend (backends[].tls). Paths absolute after loading.
struct BackendTls {
  std::string ca;           // PEM CA bundle the server certificate must chain to; empty = system store
  bool verify = true;       // check the chain and the host name; false = encrypt only
  std::string server_name;  // name the certificate must carry; empty = the address' host
  std::string cert;         // optional client certificate (PEM), with `key`
  std::string key;
  bool operator==(const BackendTls&) const = default;
};

struct BackendConfig {
  std::string name;
  HostPort address;
  std::string user;
  std::string password;
  std::string database;
  // The account that reads this backend's binlog for online moves (REPLICATION
  // SLAVE, BINLOG MONITOR); empty: `user`/`password`.
  std::string replication_user;
  std::string replication_password;
  uint32_t max_connections = 64;     // pool ceiling for this backend (all worker threads together)
  uint32_t min_connections = 0;      // kept open and warm
  uint32_t connect_timeout_ms = 2000;
  uint32_t idle_timeout_ms = 60000;  // idle connections above min are closed after this
  uint32_t ping_interval_ms = 10000; // idle connections are health-pinged this often
  uint32_t query_timeout_ms = 0;     // 0 = none
  std::optional<BackendTls> tls;     // absent = plaintext
  // Servers replicating from this one (docs/availability.md); each gets its
  // own pools with this backend's pool settings, TLS and database.
  std::vector<ReplicaConfig> replicas;
};

// Statements spanning shards (docs/configuration.md, section `scatter`).
enum class MultiShardWrites : uint8_t {
  kRefuse,      // a multi-row INSERT/REPLACE over several shards is refused (9109)
  kBestEffort,  // split per shard and run; parts are not atomic together
};

struct ScatterConfig {
  MultiShardWrites multi_shard_writes = MultiShardWrites::kRefuse;
  uint64_t max_merge_bytes = 256ull << 20;  // rows/groups a merge may buffer per statement
  uint64_t max_merge_bytes_total = 1ull << 30;  // all concurrent scatter merges of the process together
  uint32_t shard_timeout_ms = 0;            // longest wait for a shard's next packet; 0 = none
};

// Per-statement and per-session budgets (docs/configuration.md, section `limits`).
struct LimitsConfig {
  uint32_t max_statement_nodes = 500000;     // parsed expression nodes and table references
  uint32_t max_expression_depth = 4000;      // nesting depth of the parsed tree
  uint32_t max_in_list_values = 100000;      // values in one IN (...) list
  // Per session (issue 12): what one client may make the proxy hold.
  uint32_t max_prepared_statements_per_session = 16382;  // MariaDB's max_prepared_stmt_count default
  uint64_t max_long_data_bytes_per_session = 64ull << 20;  // COM_STMT_SEND_LONG_DATA bytes held
  uint64_t local_infile_max_bytes = 1ull << 30;  // one LOAD DATA LOCAL file (relayed, never held); 0 = no limit
  // All worker threads' plan caches together (each gets an equal share).
  uint64_t max_plan_cache_bytes = 64ull << 20;
  // Backend connections one user's pinned sessions (transactions, user
  // variables, temporary tables, locks) may hold at once, all workers
  // together; 0 = no limit. users[].max_pinned_connections overrides it.
  uint32_t max_pinned_connections_per_user = 0;
};

// Observability (docs/observability.md): query digests and the slow-query log.
struct LogConfig {
  std::string slow_query_file;         // JSON lines; empty = no slow-query log
  uint32_t slow_query_ms = 1000;       // statements taking at least this long are logged
  bool slow_query_keep_values = false; // log literal values as written (default: masked as ?)
};

struct DigestsConfig {
  uint32_t max_entries = 1000;         // distinct normalized statements kept; 0 = digests off
};

// Data lifecycle of month-partitioned and archived tables (docs/operations.md,
// "Data lifecycle"): partition upkeep, archive batches, export files.
struct PartitionsConfig {
  uint32_t ahead = 3;            // future months SHOW PARTITIONS expects and automatic upkeep creates
  uint32_t check_every_s = 0;    // automatic upkeep period; 0 = off (ENSURE PARTITIONS by hand)
};

struct ArchiveConfig {
  uint32_t batch_rows = 2000;    // rows per INSERT ... SELECT / DELETE batch of ARCHIVE msg
  uint32_t pause_ms = 50;        // sleep between batches (throttle)
  uint32_t max_retries = 10;     // a batch whose two counts differ is rolled back and retried this often
  std::string export_dir;        // where ARCHIVE tg_channel_message writes month files; empty = refused
};

// Online moves (docs/admin.md, "Online moves"): copy batches, the write
// hold of the cut-over, verify chunks.
struct MovesConfig {
  uint32_t batch_rows = 1000;          // rows per copy batch (SELECT ... LIMIT, one REPLACE on the target)
  uint32_t pause_ms = 0;               // sleep between copy batches (throttle)
  uint32_t hold_timeout_ms = 1000;     // a write held by a cut-over waits at most this long, then 9135
  uint32_t hold_max_waiting = 10000;   // writes waiting at once for cut-overs; more are refused with 9136
  uint32_t drain_timeout_ms = 500;     // writes in flight must end within this at a cut-over, else it is retried
  uint32_t cutover_attempts = 5;       // cut-over attempts before the move fails (routing stays on the source)
  uint32_t verify_chunk_rows = 1000;   // rows per checksum chunk of a verify
  uint64_t cutover_lag_bytes = 65536;  // catch up until less than this much binlog is left, then cut over
  uint32_t catchup_rounds = 100;       // catch-up rounds per attempt to get below cutover_lag_bytes
  uint32_t catchup_batch_transactions = 500;  // source transactions applied per target transaction (round trip)
  uint64_t catchup_batch_bytes = 4ull << 20;  // SQL per catch-up batch (below the target's max_allowed_packet)
  uint32_t replica_server_id = 3000000000u;  // server_id of the catch-up's binlog reader (+ move id)
};

// A fleet of proxies sharing one shard map through etcd (docs/operations.md,
// "Fleets"); absent = the proxy works alone.
struct FleetConfig {
  std::string name;                        // this proxy's name in the fleet (unique)
  std::vector<HostPort> etcd_endpoints;    // from "http://host:port"; tried in turn
  std::string etcd_prefix;                 // "/shardproxy/<cluster>": every key of the fleet under it
  uint32_t request_timeout_ms = 2000;      // one etcd request on one endpoint
  uint32_t lease_ttl_s = 5;                // a proxy vanishes from SHOW FLEET this long after it stops
  uint32_t retry_max_ms = 2000;            // ceiling of the reconnect backoff (starts at 50 ms)
  uint64_t max_response_bytes = 16ull << 20;  // one etcd answer (a range of the map, one watch line)
  uint32_t fence_ack_timeout_ms = 2000;    // a move's cut-over waits this long for every proxy to hold its keys
  uint32_t fence_serve_timeout_ms = 5000;  // after the switch, this long for every live proxy to serve the new map
};

struct Config {
  ServerConfig server;
  MovesConfig moves;
  std::optional<FleetConfig> fleet;
  PartitionsConfig partitions;
  ArchiveConfig archive;
  LogConfig log;
  DigestsConfig digests;
  LimitsConfig limits;
  ScatterConfig scatter;
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

// One problem found in a config file: the key path (e.g. "backends[1].address"),
// the 1-based line in the file when known (0 otherwise), and what is wrong.
struct ConfigIssue {
  std::string path;
  int line = 0;
  std::string message;
};
using ConfigIssues = std::vector<ConfigIssue>;

// Reads, parses and validates; reports every problem found, not only the first.
std::expected<Config, ConfigIssues> loadConfig(const std::string& file_path);
// Same, from text; relative paths resolve against base_dir.
std::expected<Config, ConfigIssues> parseConfig(std::string_view yaml_text, const std::string& base_dir);
// "file:line: path: message" lines, one per issue.
std::string formatIssues(const ConfigIssues& issues, std::string_view file_name);

}  // namespace sp::conf
