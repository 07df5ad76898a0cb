// One control connection to one server of a replication group, and the
// statements a role change runs on it (SWITCHOVER, FAILOVER and REJOIN,
// ha_switchover.cpp, ha_failover.cpp, ha_rejoin.cpp): each with a deadline,
// each error naming the server. The replication account is used
// (REPLICATION SLAVE ADMIN, READ_ONLY ADMIN, SLAVE MONITOR, BINLOG MONITOR).
#pragma once
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "conf/backend_config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/ha/role_change_common.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy::role_change {

int64_t unixMillis();
// What is left of a role change's bound (at least 1 ms: a wait of 0 would not wait).
std::chrono::milliseconds leftUntil(Clock::time_point deadline);
double millisSince(Clock::time_point start);

struct Control {
  std::string name;
  conf::BackendConfig login;
  std::unique_ptr<BackendConnection> conn;
};

// One statement with a deadline; the rows, or an error naming the server.
awaitable<std::expected<BackendConnection::TextRows, std::string>> sql(Control& c, std::string_view text,
                                                                        std::chrono::milliseconds timeout);
// The first column of the first row ("" when none).
awaitable<std::expected<std::string, std::string>> scalar(Control& c, std::string_view text,
                                                          std::chrono::milliseconds timeout);
// Opens c.conn (within ha.probe_timeout_ms); empty, or why not.
awaitable<std::string> connect(Control& c, const ProxyContext& context);
// Makes `c` replicate from `primary` (GTID, `use_gtid` as changeMasterSql
// says) as the backend's replication account (replicationBackend: its
// replication_user, else its user): STOP SLAVE, CHANGE MASTER, START SLAVE.
// Empty, or the first step's error.
awaitable<std::string> follow(Control& c, const conf::BackendConfig& backend, const conf::HostPort& primary,
                              std::string_view use_gtid, std::chrono::milliseconds timeout);
// follow() after the roles changed: clients no longer wait for it, so each
// statement gets the longer of the probe and switchover bounds, and one retry
// on a fresh connection when the first attempt fails. Empty, or the last
// attempt's error.
awaitable<std::string> repoint(Control& c, const conf::BackendConfig& backend, const conf::HostPort& primary,
                               std::string_view use_gtid, const ProxyContext& context);
// kPromotable's answer: log_bin and log_slave_updates both on.
bool promotable(const std::expected<BackendConnection::TextRows, std::string>& rows);
// SHOW SLAVE STATUS by column name: Gtid_IO_Pos (what it received).
awaitable<std::expected<std::string, std::string>> receivedPosition(Control& c, std::chrono::milliseconds timeout);

}  // namespace sp::proxy::role_change
