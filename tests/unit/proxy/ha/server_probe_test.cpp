// A probe's answers read by column name and judged: primary, healthy,
// lagging, broken and unanswered servers.
#include "proxy/ha/server_probe.hpp"

#include <gtest/gtest.h>

namespace sp::proxy {
namespace {

std::vector<protocol::ColumnDefinition41> columns(std::initializer_list<const char*> names) {
  std::vector<protocol::ColumnDefinition41> out;
  for (const char* n : names) {
    protocol::ColumnDefinition41 c;
    c.name = n;
    out.push_back(c);
  }
  return out;
}

const auto kColumns = columns({"Slave_IO_State", "Master_Host", "Master_Port", "Slave_IO_Running",
                               "Slave_SQL_Running", "Last_SQL_Error", "Seconds_Behind_Master", "Last_IO_Error"});

ProbeRows slaveRow(const char* io, const char* sql, std::optional<std::string> lag, const char* io_error = "") {
  return {{std::string("Waiting"), std::string("127.0.0.1"), std::string("3307"), std::string(io), std::string(sql),
           std::string(""), std::move(lag), std::string(io_error)}};
}

const ProbeRows kRole = {{std::string("1"), std::string("0-3307-12"), std::string("1"), std::string("AFTER_SYNC"),
                          std::string("ON")}};

TEST(ServerProbe, ReadsSlaveStatusByName) {
  auto s = readSlaveStatus(kColumns, slaveRow("Yes", "Yes", "3"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->source, "127.0.0.1:3307");
  EXPECT_TRUE(s->io_running);
  EXPECT_TRUE(s->sql_running);
  EXPECT_EQ(s->lag_seconds, 3);
  EXPECT_FALSE(readSlaveStatus(kColumns, {})) << "no rows: replicates from no one";
  auto null_lag = readSlaveStatus(kColumns, slaveRow("Yes", "No", std::nullopt));
  ASSERT_TRUE(null_lag);
  EXPECT_FALSE(null_lag->lag_seconds);
}

TEST(ServerProbe, ReplicaStates) {
  conf::HaConfig ha;
  ha.max_replica_lag_ms = 2000;
  auto judge = [&](const ProbeRows& rows) {
    ServerHealth s;
    applyProbe(s, kRole, readSlaveStatus(kColumns, rows), ha, 1000);
    return s;
  };
  auto up = judge(slaveRow("Yes", "Yes", "2"));
  EXPECT_EQ(up.state, ServerState::kUp);
  EXPECT_TRUE(servesReads(up));
  EXPECT_TRUE(up.read_only);
  EXPECT_EQ(up.gtid_current_pos, "0-3307-12");
  EXPECT_EQ(judge(slaveRow("Yes", "Yes", "3")).state, ServerState::kLagging);
  auto stopped = judge(slaveRow("Yes", "No", std::nullopt));
  EXPECT_EQ(stopped.state, ServerState::kBrokenReplication);
  EXPECT_FALSE(servesReads(stopped));
  auto io = judge(slaveRow("Connecting", "Yes", std::nullopt, "error connecting to master"));
  EXPECT_EQ(io.state, ServerState::kBrokenReplication);
  EXPECT_EQ(io.last_error, "error connecting to master");
  ServerHealth alone;
  applyProbe(alone, kRole, std::nullopt, ha, 1000);
  EXPECT_EQ(alone.state, ServerState::kBrokenReplication) << "a replica that replicates from no one";
}

TEST(ServerProbe, PrimaryAndFailoverLoss) {
  conf::HaConfig ha;
  ServerHealth p;
  p.primary = true;
  applyProbe(p, kRole, std::nullopt, ha, 1000);
  EXPECT_EQ(p.state, ServerState::kUp);
  EXPECT_FALSE(servesReads(p)) << "primaries serve reads as primaries, not as replicas";
  EXPECT_EQ(failoverLoss(p), "none: semi-sync AFTER_SYNC");
  ProbeRows async = {{std::string("0"), std::string("0-1-1"), std::string("0"), std::string("AFTER_COMMIT"),
                      std::string("OFF")}};
  applyProbe(p, async, std::nullopt, ha, 1000);
  EXPECT_EQ(failoverLoss(p), "possible: asynchronous replication");
  ProbeRows fell_back = {{std::string("0"), std::string("0-1-1"), std::string("1"), std::string("AFTER_SYNC"),
                          std::string("OFF")}};
  applyProbe(p, fell_back, std::nullopt, ha, 1000);
  EXPECT_NE(failoverLoss(p).find("fell back"), std::string::npos);
}

TEST(ServerProbe, FailuresMarkDownAfterTheTimeout) {
  conf::HaConfig ha;
  ha.failure_timeout_ms = 3000;
  ServerHealth s;
  s.primary = true;
  applyProbe(s, kRole, std::nullopt, ha, 1000);
  applyProbeFailure(s, "connect refused", ha, 2000, 2000);
  EXPECT_EQ(s.state, ServerState::kUp) << "one failed probe is not an outage";
  EXPECT_FALSE(s.answered);
  applyProbeFailure(s, "connect refused", ha, 5000, 2000);
  EXPECT_EQ(s.state, ServerState::kDown);
  EXPECT_EQ(s.probe_failures, 2u);
  ServerHealth never;
  applyProbeFailure(never, "connect refused", ha, 1000, 1000);
  EXPECT_EQ(never.state, ServerState::kDown) << "never answered: down at once";
  ServerHealth replica;
  applyProbe(replica, kRole, readSlaveStatus(kColumns, slaveRow("Yes", "Yes", "0")), ha, 1000);
  applyProbeFailure(replica, "timeout", ha, 1500, 1500);
  EXPECT_FALSE(servesReads(replica)) << "a replica that stopped answering serves no reads at once";
}

}  // namespace
}  // namespace sp::proxy
