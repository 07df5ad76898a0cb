// One probe of one server, read and judged (pure: the monitor does the I/O).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conf/ha_config.hpp"
#include "protocol/resultset.hpp"
#include "proxy/core/replica_health.hpp"

namespace sp::proxy {

// The role and position query, one round trip.
// Servers without semi-sync's variables (built without it) get this one.
inline constexpr std::string_view kBasicRoleQuery = "SELECT @@global.read_only, @@global.gtid_current_pos";
// Semi-sync's status comes from GLOBAL_STATUS so that it stays one statement.
inline constexpr std::string_view kRoleQuery =
    "SELECT @@global.read_only, @@global.gtid_current_pos, @@global.rpl_semi_sync_master_enabled, "
    "@@global.rpl_semi_sync_master_wait_point, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
    "WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS')";
inline constexpr std::string_view kSlaveStatusQuery = "SHOW SLAVE STATUS";

using ProbeRows = std::vector<std::vector<std::optional<std::string>>>;

// SHOW SLAVE STATUS read by column name (their order differs between versions).
struct SlaveStatus {
  std::string source;  // Master_Host:Master_Port
  bool io_running = false;
  bool sql_running = false;
  std::optional<int64_t> lag_seconds;
  std::string last_error;  // Last_IO_Error or Last_SQL_Error, whichever is set
};
// nullopt: no rows (the server replicates from no one).
std::optional<SlaveStatus> readSlaveStatus(const std::vector<protocol::ColumnDefinition41>& columns,
                                           const ProbeRows& rows);

// Applies one answered probe to `server` and judges its state. `role_rows`:
// kRoleQuery's answer; `slave`: readSlaveStatus's.
void applyProbe(ServerHealth& server, const ProbeRows& role_rows, const std::optional<SlaveStatus>& slave,
                const conf::HaConfig& ha, int64_t now_unix_ms);
// A probe that failed (connect, query or timeout): down once the last
// answer is older than ha.failure_timeout_ms (or there never was one and
// this is the first failure after failure_timeout_ms of trying).
// `refused`: the failure was the server's own ERR (it is alive).
void applyProbeFailure(ServerHealth& server, std::string error, const conf::HaConfig& ha, int64_t now_unix_ms,
                       int64_t first_failure_unix_ms, bool refused = false);

}  // namespace sp::proxy
