#include "conf/sections.hpp"

#include "conf/field_readers.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fmt/format.h>

namespace sp::conf::detail {
namespace {

// Limits: wide enough for real deployments, narrow enough to catch unit mistakes
// (seconds typed where milliseconds are meant, bytes vs KiB, ...).
constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kMinPacketBytes = 1024;
constexpr uint64_t kMaxPacketBytes = 1ull << 30;
constexpr uint64_t kMaxGraceMs = 3'600'000;
constexpr uint64_t kMaxTimeoutMs = 86'400'000;
constexpr uint64_t kMinHandshakeTimeoutMs = 100;
constexpr uint64_t kMinHandshakePacketBytes = 1024;
constexpr uint64_t kMaxHandshakePacketBytes = 1u << 20;
constexpr uint64_t kMaxWaitTimeoutS = 31'536'000;  // MariaDB's own ceiling for wait_timeout

// ---- server ----

const FieldSpec<ServerConfig> kServerFields[] = {
    {"listen", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       if (auto hp = w.readHostPort(v, p)) s.listen = *hp;
     }},
    {"admin_listen", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       if (v.IsNull()) return;  // `admin_listen: ~` keeps the admin port off
       if (auto hp = w.readHostPort(v, p)) s.admin_listen = *hp;
     }},
    {"admin_allow_remote", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       static constexpr std::string_view kBools[] = {"true", "false"};
       if (auto word = w.readChoice(v, p, kBools)) s.admin_allow_remote = *word == "true";
     }},
    {"metrics_listen", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       if (v.IsNull()) return;  // `metrics_listen: ~` keeps the metrics endpoint off
       if (auto hp = w.readHostPort(v, p)) s.metrics_listen = *hp;
     }},
    {"metrics_allow_remote", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       static constexpr std::string_view kBools[] = {"true", "false"};
       if (auto word = w.readChoice(v, p, kBools)) s.metrics_allow_remote = *word == "true";
     }},
    {"threads", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 0, kMaxThreads), s.threads);
     }},
    {"max_connections", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 1, kMaxClientConnections), s.max_connections);
     }},
    {"max_packet_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, kMinPacketBytes, kMaxPacketBytes), s.max_packet_bytes);
     }},
    {"shutdown_grace_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 0, kMaxGraceMs), s.shutdown_grace_ms);
     }},
    {"log_level", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       if (auto level = w.readChoice(v, p, kLogLevels)) s.log_level = *level;
     }},
    {"handshake_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, kMinHandshakeTimeoutMs, kMaxTimeoutMs), s.handshake_timeout_ms);
     }},
    {"max_handshake_packet_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, kMinHandshakePacketBytes, kMaxHandshakePacketBytes), s.max_handshake_packet_bytes);
     }},
    {"max_connections_per_host", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 0, kMaxClientConnections), s.max_connections_per_host);
     }},
    {"wait_timeout_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 1, kMaxWaitTimeoutS), s.wait_timeout_s);
     }},
    {"interactive_timeout_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 1, kMaxWaitTimeoutS), s.interactive_timeout_s);
     }},
    {"net_write_timeout_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 1, kMaxWaitTimeoutS), s.net_write_timeout_s);
     }},
    {"net_read_timeout_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       assign(w.readUInt(v, p, 1, kMaxWaitTimeoutS), s.net_read_timeout_s);
     }},
    // Paths are made absolute by resolveTlsPaths (tls_fields.cpp), which has the base directory.
    {"tls_cert", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       readStringInto(w, v, p, s.tls_cert, NullIs::kEmpty, false);
     }},
    {"tls_version", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       auto text = w.readString(v, p, NullIs::kMissing, false);
       if (!text) return;
       bool v12 = false, v13 = false;
       size_t start = 0;
       while (start <= text->size()) {
         size_t comma = text->find(',', start);
         if (comma == std::string::npos) comma = text->size();
         std::string item = text->substr(start, comma - start);
         while (!item.empty() && item.front() == ' ') item.erase(item.begin());
         while (!item.empty() && item.back() == ' ') item.pop_back();
         if (item == "TLSv1.2") {
           v12 = true;
         } else if (item == "TLSv1.3") {
           v13 = true;
         } else {
           w.report(p, v, fmt::format("'{}' is not offered: TLSv1.2 and TLSv1.3 only (comma-separated, as "
                                      "MariaDB's tls_version)", item));
           return;
         }
         start = comma + 1;
       }
       s.tls_v12 = v12;
       s.tls_v13 = v13;
     }},
    {"tls_ciphers", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       readStringInto(w, v, p, s.tls_ciphers, NullIs::kEmpty, false);
     }},
    {"tls_key", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       readStringInto(w, v, p, s.tls_key, NullIs::kEmpty, false);
     }},
    {"tls_ca", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ServerConfig& s) {
       readStringInto(w, v, p, s.tls_ca, NullIs::kEmpty, false);
     }},
};

// ---- limits ----

constexpr uint64_t kMaxStatementNodes = 100'000'000;
constexpr uint64_t kMinExpressionDepth = 64;
// Past this a recursive walk of the tree could need more than a worker
// thread's stack (tests/unit/routing/deep_statement_test.cpp measures it).
constexpr uint64_t kMaxExpressionDepth = 10'000;
constexpr uint64_t kMaxPreparedStatements = 1'048'576;  // MariaDB's ceiling for max_prepared_stmt_count
constexpr uint64_t kMinLongDataBytes = 1024;
constexpr uint64_t kMaxLongDataBytes = 64ull << 30;
constexpr uint64_t kMaxLocalInfileBytes = 1ull << 50;  // 1 PiB: a typo, not a file
constexpr uint64_t kMaxPlanCacheBytes = 64ull << 30;

const FieldSpec<LimitsConfig> kLimitsFields[] = {
    {"max_statement_nodes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 1000, kMaxStatementNodes), l.max_statement_nodes);
     }},
    {"max_expression_depth", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, kMinExpressionDepth, kMaxExpressionDepth), l.max_expression_depth);
     }},
    {"max_in_list_values", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 1, kMaxStatementNodes), l.max_in_list_values);
     }},
    {"max_prepared_statements_per_session", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 1, kMaxPreparedStatements), l.max_prepared_statements_per_session);
     }},
    {"max_long_data_bytes_per_session", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, kMinLongDataBytes, kMaxLongDataBytes), l.max_long_data_bytes_per_session);
     }},
    {"local_infile_max_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 0, kMaxLocalInfileBytes), l.local_infile_max_bytes);
     }},
    {"max_plan_cache_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 0, kMaxPlanCacheBytes), l.max_plan_cache_bytes);
     }},
    {"max_pinned_connections_per_user", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LimitsConfig& l) {
       assign(w.readUInt(v, p, 0, kMaxPoolConnections), l.max_pinned_connections_per_user);
     }},
};

// ---- log, digests (observability) ----

constexpr uint64_t kMaxDigestEntries = 1'000'000;

struct LogEntry {
  LogConfig log;
  std::string base_dir;
};

const FieldSpec<LogEntry> kLogFields[] = {
    {"slow_query_file", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LogEntry& l) {
       if (auto s = w.readString(v, p, NullIs::kEmpty, true)) l.log.slow_query_file = resolvePath(l.base_dir, *s);
     }},
    {"slow_query_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LogEntry& l) {
       assign(w.readUInt(v, p, 0, kMaxTimeoutMs), l.log.slow_query_ms);
     }},
    {"slow_query_keep_values", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, LogEntry& l) {
       static constexpr std::string_view kBools[] = {"true", "false"};
       if (auto word = w.readChoice(v, p, kBools)) l.log.slow_query_keep_values = *word == "true";
     }},
};

const FieldSpec<DigestsConfig> kDigestsFields[] = {
    {"max_entries", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, DigestsConfig& d) {
       assign(w.readUInt(v, p, 0, kMaxDigestEntries), d.max_entries);
     }},
};

// ---- partitions, archive (data lifecycle) ----

constexpr uint64_t kMaxPartitionsAhead = 120;
constexpr uint64_t kMaxCheckEveryS = 31 * 86'400;

// "90s", "10m", "1h", "2d" or a plain number of seconds; 0 = off.
std::optional<uint64_t> parseDurationSeconds(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t unit = 1;
  switch (text.back()) {
    case 's': unit = 1; text.remove_suffix(1); break;
    case 'm': unit = 60; text.remove_suffix(1); break;
    case 'h': unit = 3600; text.remove_suffix(1); break;
    case 'd': unit = 86'400; text.remove_suffix(1); break;
    default: break;
  }
  if (text.empty() || text.size() > 9) return std::nullopt;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n * unit;
}

const FieldSpec<PartitionsConfig> kPartitionsFields[] = {
    {"ahead", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, PartitionsConfig& c) {
       assign(w.readUInt(v, p, 1, kMaxPartitionsAhead), c.ahead);
     }},
    {"check_every", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, PartitionsConfig& c) {
       auto text = w.readString(v, p, NullIs::kMissing, false);
       if (!text) return;
       auto seconds = parseDurationSeconds(*text);
       if (!seconds || *seconds > kMaxCheckEveryS) {
         w.report(p, v, "expected a duration such as 30s, 10m, 1h or 1d (at most 31d; 0 = off), got '" + *text + "'");
         return;
       }
       c.check_every_s = static_cast<uint32_t>(*seconds);
     }},
};

struct ArchiveEntry {
  ArchiveConfig archive;
  std::string base_dir;
};

const FieldSpec<ArchiveEntry> kArchiveFields[] = {
    {"batch_rows", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ArchiveEntry& a) {
       assign(w.readUInt(v, p, 1, 100'000), a.archive.batch_rows);
     }},
    {"pause_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ArchiveEntry& a) {
       assign(w.readUInt(v, p, 0, 60'000), a.archive.pause_ms);
     }},
    {"max_retries", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ArchiveEntry& a) {
       assign(w.readUInt(v, p, 0, 1000), a.archive.max_retries);
     }},
    {"export_dir", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ArchiveEntry& a) {
       if (auto s = w.readString(v, p, NullIs::kEmpty, true)) a.archive.export_dir = resolvePath(a.base_dir, *s);
     }},
};

// ---- schema (DDL on logical tables) ----

const FieldSpec<SchemaConfig> kSchemaFields[] = {
    {"parallel_per_backend", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, SchemaConfig& s) {
       assign(w.readUInt(v, p, 1, 64), s.parallel_per_backend);
     }},
    {"async", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, SchemaConfig& s) { readBool(w, v, p, s.async); }},
    {"allow_copy", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, SchemaConfig& s) { readBool(w, v, p, s.allow_copy); }},
    {"allow_truncate", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, SchemaConfig& s) {
       readBool(w, v, p, s.allow_truncate);
     }},
    {"lock_wait_timeout_s", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, SchemaConfig& s) {
       assign(w.readUInt(v, p, 1, 31'536'000), s.lock_wait_timeout_s);
     }},
};

// ---- moves (online resharding) ----

const FieldSpec<MovesConfig> kMovesFields[] = {
    {"batch_rows", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 100'000), m.batch_rows);
     }},
    {"pause_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 0, 60'000), m.pause_ms);
     }},
    {"hold_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 10, 60'000), m.hold_timeout_ms);
     }},
    {"hold_max_waiting", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 1'000'000), m.hold_max_waiting);
     }},
    {"drain_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 60'000), m.drain_timeout_ms);
     }},
    {"cutover_attempts", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 1000), m.cutover_attempts);
     }},
    {"verify_chunk_rows", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 10, 1'000'000), m.verify_chunk_rows);
     }},
    {"cutover_lag_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 0, 1ull << 40), m.cutover_lag_bytes);
     }},
    {"catchup_rounds", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 100'000), m.catchup_rounds);
     }},
    {"catchup_batch_transactions", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 100'000), m.catchup_batch_transactions);
     }},
    {"catchup_batch_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 4096, 1ull << 30), m.catchup_batch_bytes);
     }},
    {"replica_server_id", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, MovesConfig& m) {
       assign(w.readUInt(v, p, 1, 4'000'000'000ull), m.replica_server_id);
     }},
};

// ---- scatter ----

constexpr std::string_view kMultiShardWrites[] = {"refuse", "best_effort"};
constexpr uint64_t kMinMergeBytes = 1ull << 20;
constexpr uint64_t kMaxMergeBytes = 64ull << 30;

const FieldSpec<ScatterConfig> kScatterFields[] = {
    {"multi_shard_writes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ScatterConfig& s) {
       if (auto choice = w.readChoice(v, p, kMultiShardWrites)) {
         s.multi_shard_writes = *choice == "best_effort" ? MultiShardWrites::kBestEffort : MultiShardWrites::kRefuse;
       }
     }},
    {"max_merge_bytes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ScatterConfig& s) {
       assign(w.readUInt(v, p, kMinMergeBytes, kMaxMergeBytes), s.max_merge_bytes);
     }},
    {"max_merge_bytes_total", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ScatterConfig& s) {
       assign(w.readUInt(v, p, kMinMergeBytes, kMaxMergeBytes), s.max_merge_bytes_total);
     }},
    {"shard_timeout_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, ScatterConfig& s) {
       assign(w.readUInt(v, p, 0, kMaxTimeoutMs), s.shard_timeout_ms);
     }},
};

// ---- backends ----

struct BackendEntry {
  BackendConfig backend;
  int name_line = 0;
  int min_line = 0;
  std::vector<int> replica_lines;
};

template <uint32_t BackendConfig::*Member, uint64_t Min, uint64_t Max>
void readBackendUInt(Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
  assign(w.readUInt(v, p, Min, Max), b.backend.*Member);
}

const FieldSpec<BackendEntry> kBackendFields[] = {
    {"name", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       b.name_line = lineOf(v);
       readName(w, v, p, b.backend.name);
     }},
    {"address", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       if (auto hp = w.readHostPort(v, p)) b.backend.address = *hp;
     }},
    {"user", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readStringInto(w, v, p, b.backend.user, NullIs::kMissing, false);
     }},
    {"password", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readStringInto(w, v, p, b.backend.password, NullIs::kEmpty, true);
     }},
    {"database", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readStringInto(w, v, p, b.backend.database, NullIs::kEmpty, true);
     }},
    {"replication_user", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readStringInto(w, v, p, b.backend.replication_user, NullIs::kEmpty, true);
     }},
    {"replication_password", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readStringInto(w, v, p, b.backend.replication_password, NullIs::kEmpty, true);
     }},
    {"max_connections", false, readBackendUInt<&BackendConfig::max_connections, 1, kMaxPoolConnections>},
    {"min_connections", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       b.min_line = lineOf(v);
       assign(w.readUInt(v, p, 0, kMaxPoolConnections), b.backend.min_connections);
     }},
    {"max_connecting", false, readBackendUInt<&BackendConfig::max_connecting, 1, kMaxPoolConnections>},
    {"connect_timeout_ms", false, readBackendUInt<&BackendConfig::connect_timeout_ms, 1, kMaxTimeoutMs>},
    {"idle_timeout_ms", false, readBackendUInt<&BackendConfig::idle_timeout_ms, 0, kMaxTimeoutMs>},
    {"ping_interval_ms", false, readBackendUInt<&BackendConfig::ping_interval_ms, 0, kMaxTimeoutMs>},
    {"query_timeout_ms", false, readBackendUInt<&BackendConfig::query_timeout_ms, 0, kMaxTimeoutMs>},
    {"max_active_statements", false,
     readBackendUInt<&BackendConfig::max_active_statements, 0, kMaxActiveStatements>},
    {"tls", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readBackendTls(w, v, p, b.backend.tls);
     }},
    {"replicas", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendEntry& b) {
       readReplicas(w, v, p, b.backend.replicas, b.replica_lines);
     }},
};

void readBackends(Walker& w, const YAML::Node& list, const std::string& path, Document& doc) {
  doc.backends_line = lineOf(list);
  if (list.IsNull()) return;
  if (!w.expectSequence(list, path)) return;
  for (size_t i = 0; i < list.size(); ++i) {
    BackendEntry entry;
    readMapping<BackendEntry>(w, list[i], fmt::format("{}[{}]", path, i), kBackendFields, entry);
    doc.config.backends.push_back(std::move(entry.backend));
    doc.backend_lines.push_back(entry.name_line);
    doc.min_conn_lines.push_back(entry.min_line);
    doc.replica_lines.push_back(std::move(entry.replica_lines));
  }
}

// ---- top level ----

const FieldSpec<Document> kTopFields[] = {
    {"server", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       d.server_line = lineOf(v);
       if (v.IsNull()) return;
       if (v.IsMap() && v["admin_listen"]) d.admin_listen_line = lineOf(v["admin_listen"]);
       if (v.IsMap() && v["metrics_listen"]) d.metrics_listen_line = lineOf(v["metrics_listen"]);
       readMapping<ServerConfig>(w, v, p, kServerFields, d.config.server);
     }},
    {"log", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       LogEntry entry{d.config.log, d.base_dir};
       readMapping<LogEntry>(w, v, p, kLogFields, entry);
       d.config.log = std::move(entry.log);
     }},
    {"digests", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<DigestsConfig>(w, v, p, kDigestsFields, d.config.digests);
     }},
    {"partitions", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<PartitionsConfig>(w, v, p, kPartitionsFields, d.config.partitions);
     }},
    {"archive", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       ArchiveEntry entry{d.config.archive, d.base_dir};
       readMapping<ArchiveEntry>(w, v, p, kArchiveFields, entry);
       d.config.archive = std::move(entry.archive);
     }},
    {"moves", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<MovesConfig>(w, v, p, kMovesFields, d.config.moves);
     }},
    {"schema", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<SchemaConfig>(w, v, p, kSchemaFields, d.config.schema);
     }},
    {"statement_limits", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       readStatementLimits(w, v, p, d.config.statement_limits);
     }},
    {"background", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       readBackground(w, v, p, d.config.background);
     }},
    {"changes", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) { readChanges(w, v, p, d.config.changes); }},
    {"scatter", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<ScatterConfig>(w, v, p, kScatterFields, d.config.scatter);
     }},
    {"transactions", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) { readTransactions(w, v, p, d); }},
    {"ha", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) { readHa(w, v, p, d.config.ha); }},
    {"overload", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) { readOverload(w, v, p, d.config.overload); }},
    {"limits", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (v.IsNull()) return;
       readMapping<LimitsConfig>(w, v, p, kLimitsFields, d.config.limits);
     }},
    {"users", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       readUsers(w, v, p, d);
     }},
    {"admin_users", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       readAdminUsers(w, v, p, d);
     }},
    {"backends", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       readBackends(w, v, p, d);
     }},
    {"shard_map", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (auto s = w.readString(v, p, NullIs::kEmpty, true)) {
         d.config.shard_map_path = resolvePath(d.base_dir, *s);
       }
     }},
    {"default_backend", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       d.has_default_backend = true;
       d.default_backend_line = lineOf(v);
       readStringInto(w, v, p, d.config.default_backend, NullIs::kMissing, false);
     }},
    {"fleet", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) { readFleet(w, v, p, d); }},
    {"cache", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
       if (auto s = w.readString(v, p, NullIs::kEmpty, true)) {
         d.config.cache_path = resolvePath(d.base_dir, *s);
       }
     }},
};

}  // namespace

void readDocument(Walker& walker, const YAML::Node& root, Document& doc) {
  if (!root.IsDefined() || root.IsNull()) {
    walker.report("", 0, "the configuration is empty");
    return;
  }
  if (!root.IsMap()) {
    walker.report("", root, "the top level must be a mapping (server:, users:, backends:, ...)");
    return;
  }
  readMapping<Document>(walker, root, "", kTopFields, doc);
}

}  // namespace sp::conf::detail
