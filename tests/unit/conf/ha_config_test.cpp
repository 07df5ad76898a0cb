// Availability keys: `ha:`, backends[].replicas and users[].reads; every
// server has its own name and address, bad values name path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

std::string withReplicas(std::string_view replicas, std::string_view extra = "") {
  return std::string("users:\n  - {name: app, password: pw, reads: replica}\n  - {name: ops, password: pw}\n"
                     "backends:\n  - name: db0\n    address: 127.0.0.1:3307\n    user: proxy\n    replicas:\n") +
         std::string(replicas) + std::string(extra);
}

TEST(HaConfig, Defaults) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->ha.check_interval_ms, 500u);
  EXPECT_EQ(config->ha.max_replica_lag_ms, 5000u);
  EXPECT_EQ(config->ha.causal_read_timeout_ms, 1000u);
  EXPECT_FALSE(config->ha.auto_failover);
  EXPECT_EQ(config->ha.switchover_timeout_ms, 5000u);
  EXPECT_TRUE(config->backends[0].replicas.empty());
  EXPECT_EQ(config->users[0].reads, ReadTarget::kPrimary);
}

TEST(HaConfig, ParsesReplicasReadsAndTheSection) {
  auto config = parseConfig(withReplicas("      - {name: db0r1, address: 127.0.0.1:3407}\n"
                                         "      - {name: db0r2, address: 127.0.0.1:3507, user: ro, password: x}\n",
                                         "ha:\n  check_interval_ms: 200\n  max_replica_lag_ms: 0\n"
                                         "  causal_read_timeout_ms: 250\n  probe_timeout_ms: 300\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const auto& replicas = config->backends[0].replicas;
  ASSERT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[0].name, "db0r1");
  EXPECT_EQ(replicas[0].address.port, 3407);
  EXPECT_TRUE(replicas[0].user.empty());
  EXPECT_EQ(replicas[1].user, "ro");
  EXPECT_EQ(replicas[1].password, "x");
  EXPECT_EQ(config->users[0].reads, ReadTarget::kReplica);
  EXPECT_EQ(config->users[1].reads, ReadTarget::kPrimary);
  EXPECT_EQ(config->ha.check_interval_ms, 200u);
  EXPECT_EQ(config->ha.max_replica_lag_ms, 0u);
  EXPECT_EQ(config->ha.causal_read_timeout_ms, 250u);
  EXPECT_EQ(config->ha.probe_timeout_ms, 300u);
}

TEST(HaConfig, EveryServerHasItsOwnNameAndAddress) {
  auto config = parseConfig(withReplicas("      - {name: db0, address: 127.0.0.1:3407}\n"
                                         "      - {name: db0r2, address: 127.0.0.1:3307}\n"),
                            kBase);
  ASSERT_FALSE(config);
  const auto& issues = config.error();
  ASSERT_EQ(issues.size(), 2u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "backends[0].replicas[0].name");
  EXPECT_EQ(issues[0].line, 9);
  EXPECT_NE(issues[0].message.find("'db0' is already used by backends[0]"), std::string::npos) << issues[0].message;
  EXPECT_EQ(issues[1].path, "backends[0].replicas[1].address");
  EXPECT_NE(issues[1].message.find("127.0.0.1:3307 is already backends[0]"), std::string::npos) << issues[1].message;
}

TEST(HaConfig, BadValuesNamePathAndLine) {
  auto config = parseConfig(withReplicas("      - {name: db0r1}\n",
                                         "ha:\n  check_interval_ms: 10\n  auto_failover: maybe\n  lag: 3\n  switchover_timeout_ms: 5\n"),
                            kBase);
  ASSERT_FALSE(config);
  std::string text = formatIssues(config.error(), "p.yaml");
  EXPECT_NE(text.find("backends[0].replicas[0].address"), std::string::npos) << text;
  EXPECT_NE(text.find("p.yaml:11: ha.check_interval_ms"), std::string::npos) << text;
  EXPECT_NE(text.find("p.yaml:12: ha.auto_failover"), std::string::npos) << text;
  EXPECT_NE(text.find("p.yaml:14: ha.switchover_timeout_ms"), std::string::npos) << text;
  EXPECT_NE(text.find("ha.lag"), std::string::npos) << text;
  auto reads = parseConfig("users:\n  - {name: app, password: pw, reads: replicas}\n"
                           "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n",
                           kBase);
  ASSERT_FALSE(reads);
  text = formatIssues(reads.error(), "p.yaml");
  EXPECT_NE(text.find("users[0].reads"), std::string::npos) << text;
  EXPECT_NE(text.find("did you mean 'replica'"), std::string::npos) << text;
}

}  // namespace
}  // namespace sp::conf
