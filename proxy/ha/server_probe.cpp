#include "proxy/ha/server_probe.hpp"

#include <charconv>

namespace sp::proxy {
namespace {

const std::optional<std::string>* column(const std::vector<protocol::ColumnDefinition41>& columns,
                                         const std::vector<std::optional<std::string>>& row, std::string_view name) {
  for (size_t i = 0; i < columns.size() && i < row.size(); ++i) {
    if (columns[i].name == name) return &row[i];
  }
  return nullptr;
}

std::string text(const std::optional<std::string>* value) { return value && *value ? **value : std::string(); }

bool yes(const std::optional<std::string>* value) { return text(value) == "Yes"; }

}  // namespace

std::optional<SlaveStatus> readSlaveStatus(const std::vector<protocol::ColumnDefinition41>& columns,
                                           const ProbeRows& rows) {
  if (rows.empty()) return std::nullopt;
  // One row per connection to a source; the default (unnamed) one is what
  // the proxy's groups use, and SHOW SLAVE STATUS lists only that one.
  const auto& row = rows.front();
  SlaveStatus s;
  std::string host = text(column(columns, row, "Master_Host"));
  std::string port = text(column(columns, row, "Master_Port"));
  if (!host.empty()) s.source = host + ":" + port;
  s.io_running = yes(column(columns, row, "Slave_IO_Running"));
  s.sql_running = yes(column(columns, row, "Slave_SQL_Running"));
  std::string lag = text(column(columns, row, "Seconds_Behind_Master"));
  int64_t seconds = 0;
  if (!lag.empty() && std::from_chars(lag.data(), lag.data() + lag.size(), seconds).ec == std::errc{}) {
    s.lag_seconds = seconds;
  }
  s.last_error = text(column(columns, row, "Last_IO_Error"));
  if (s.last_error.empty()) s.last_error = text(column(columns, row, "Last_SQL_Error"));
  return s;
}

void applyProbe(ServerHealth& server, const ProbeRows& role_rows, const std::optional<SlaveStatus>& slave,
                const conf::HaConfig& ha, int64_t now_unix_ms) {
  ++server.probes;
  server.answered = true;
  server.refused = false;
  server.checked_unix_ms = now_unix_ms;
  server.last_error.clear();
  if (!role_rows.empty() && role_rows.front().size() >= 2) {
    server.read_only = role_rows.front()[0].value_or("0") == "1";
    server.gtid_current_pos = role_rows.front()[1].value_or("");
  }
  if (!role_rows.empty() && role_rows.front().size() >= 5) {
    const auto& row = role_rows.front();
    server.semi_sync_enabled = row[2].value_or("0") == "1";
    server.semi_sync_wait_point = row[3].value_or("");
    server.semi_sync_active = row[4].value_or("OFF") == "ON";
  }
  server.replicating = slave.has_value();
  server.io_running = slave && slave->io_running;
  server.sql_running = slave && slave->sql_running;
  server.lag_seconds = slave ? slave->lag_seconds : std::nullopt;
  server.source = slave ? slave->source : std::string();
  if (slave && !slave->last_error.empty()) server.last_error = slave->last_error;
  if (server.primary) {
    server.state = ServerState::kUp;
    return;
  }
  if (!server.replicating || !server.io_running || !server.sql_running || !server.lag_seconds) {
    // A replica that copies from no one, or whose threads stopped, holds
    // data of an unknown age: no reads, whatever its lag column says.
    server.state = ServerState::kBrokenReplication;
    if (server.last_error.empty()) {
      server.last_error = !server.replicating ? "not replicating (SHOW SLAVE STATUS is empty)"
                          : !server.io_running ? "Slave_IO_Running is not Yes"
                          : !server.sql_running ? "Slave_SQL_Running is not Yes"
                                                : "Seconds_Behind_Master is NULL";
    }
    return;
  }
  server.state = *server.lag_seconds * 1000 > static_cast<int64_t>(ha.max_replica_lag_ms) ? ServerState::kLagging
                                                                                         : ServerState::kUp;
}

void applyProbeFailure(ServerHealth& server, std::string error, const conf::HaConfig& ha, int64_t now_unix_ms,
                       int64_t first_failure_unix_ms, bool refused) {
  ++server.probes;
  ++server.probe_failures;
  server.answered = false;
  server.refused = refused;
  server.last_error = std::move(error);
  // A replica that does not answer serves no reads at once; "down" (for
  // SHOW BACKENDS, and the failover to come) waits for failure_timeout_ms.
  const bool timed_out = now_unix_ms - first_failure_unix_ms >= static_cast<int64_t>(ha.failure_timeout_ms);
  if (timed_out || server.state == ServerState::kUnknown) server.state = ServerState::kDown;
}

}  // namespace sp::proxy
