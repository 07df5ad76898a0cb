// The statements a primary switch sends to the servers (docs/availability.md,
// "What SWITCHOVER does"), built in one place so they can be unit-tested and
// read in one sitting. Pure.
#pragma once
#include <string>
#include <string_view>

#include "conf/host_port.hpp"

namespace sp::proxy {

// A SQL string literal: quotes, backslashes and NUL escaped as MariaDB reads them.
std::string sqlString(std::string_view text);

// CHANGE MASTER TO the new primary with GTID replication. `use_gtid`:
// "slave_pos" for a replica (it resumes from what it applied), "current_pos"
// for a demoted primary (its own binlog holds its last writes).
std::string changeMasterSql(const conf::HostPort& primary, std::string_view user, std::string_view password,
                            std::string_view use_gtid);

// Waits until the server has applied `position`, at most `timeout_ms`:
// MASTER_GTID_WAIT answers 0 when it has, -1 on timeout.
std::string gtidWaitSql(std::string_view position, uint32_t timeout_ms);

inline constexpr std::string_view kSetReadOnly = "SET GLOBAL read_only = 1";
inline constexpr std::string_view kSetWritable = "SET GLOBAL read_only = 0";
// The primary's last own writes (with read_only on, nothing is added).
inline constexpr std::string_view kBinlogPosition = "SELECT @@global.gtid_binlog_pos";
inline constexpr std::string_view kCurrentPosition = "SELECT @@global.gtid_current_pos";
// A promoted replica must log what it applies, or the other replicas could
// not follow it: both must be on.
inline constexpr std::string_view kPromotable = "SELECT @@global.log_bin, @@global.log_slave_updates";
inline constexpr std::string_view kStopReplication = "STOP SLAVE";
inline constexpr std::string_view kForgetSource = "RESET SLAVE ALL";
inline constexpr std::string_view kStartReplication = "START SLAVE";

}  // namespace sp::proxy
