// Statement limits set at run time, shared by a fleet (issue 32, docs/
// operations.md "Statement limits"; records: coord/limit_records.hpp).
// SET LIMIT on any proxy puts the rule in etcd before it answers OK; every
// proxy applies the rules it finds at each etcd session's start and each one
// its watch sees afterwards, so a proxy started (or reconnected) later
// enforces them too. A proxy's own configuration file gives its rules at
// start-up; a fleet's record of the same user or digest overrides them.
// Each proxy then enforces its share of each limit (statement_limit_table.hpp).
#pragma once
#include <expected>
#include <string>

#include "conf/fleet_config.hpp"
#include "conf/statement_limits_config.hpp"
#include "coord/etcd_messages.hpp"
#include "proxy/fleet/etcd_client.hpp"

namespace sp::proxy {

class StatementLimits;

class FleetLimits {
 public:
  // `limits`: null when the proxy runs no statement limits (records ignored).
  FleetLimits(const conf::FleetConfig& config, StatementLimits* limits);

  // The agent's thread: reads every record and applies it ("" or why not).
  awaitable<std::string> read(EtcdClient& client);
  // The agent's thread: a watched put of a record.
  void onEvent(const coord::EtcdWatchEvent& event);

  // The admin thread (blocking, its own connection): puts the rule for the
  // fleet. An error: etcd did not take it, nothing is to change anywhere.
  std::expected<void, std::string> publish(const conf::StatementLimitRule& rule, const std::string& who);

 private:
  void apply(const std::string& key, std::string_view value);

  conf::FleetConfig config_;
  StatementLimits* limits_;
  EtcdClient admin_client_;
};

}  // namespace sp::proxy
