// The `changes` section: the change stream is off by default; every key has
// a default, and a value out of its range is refused with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(ChangesConfig, OffWithDefaultsWhenAbsent) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const ChangesConfig& c = config->changes;
  EXPECT_FALSE(c.enabled);
  EXPECT_FALSE(c.listen);
  EXPECT_TRUE(c.tables.empty());
  EXPECT_EQ(c.source, "replicas");
  EXPECT_EQ(c.max_events_per_second, 20'000u);
  EXPECT_EQ(c.max_consumers, 8u);
  EXPECT_EQ(c.buffer_events, 1000u);
  EXPECT_EQ(c.max_transaction_events, 100'000u);
  EXPECT_EQ(c.heartbeat_ms, 1000u);
  EXPECT_EQ(c.replica_server_id, 3'100'000'000u);
  EXPECT_EQ(c.send_timeout_ms, 60'000u);
  EXPECT_FALSE(c.allow_remote);
}

TEST(ChangesConfig, ParsesEveryKeyAndListenEnables) {
  auto config = parseConfig(minimalWith("changes:\n  listen: 127.0.0.1:7070\n  tables: [msg, tg_channel_message]\n"
                                        "  source: primary\n  max_events_per_second: 0\n  max_consumers: 2\n"
                                        "  buffer_events: 50\n  max_transaction_events: 500\n  heartbeat_ms: 200\n"
                                        "  replica_server_id: 77\n  send_timeout_ms: 500\n  allow_remote: true\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const ChangesConfig& c = config->changes;
  EXPECT_TRUE(c.enabled);
  ASSERT_TRUE(c.listen);
  EXPECT_EQ(c.listen->port, 7070);
  EXPECT_EQ(c.tables, (std::vector<std::string>{"msg", "tg_channel_message"}));
  EXPECT_EQ(c.source, "primary");
  EXPECT_EQ(c.max_events_per_second, 0u);
  EXPECT_EQ(c.max_consumers, 2u);
  EXPECT_EQ(c.buffer_events, 50u);
  EXPECT_EQ(c.max_transaction_events, 500u);
  EXPECT_EQ(c.heartbeat_ms, 200u);
  EXPECT_EQ(c.replica_server_id, 77u);
  EXPECT_EQ(c.send_timeout_ms, 500u);
  EXPECT_TRUE(c.allow_remote);
}

TEST(ChangesConfig, EnabledWithoutListenServesOnlyTheAdminPort) {
  auto config = parseConfig(minimalWith("changes:\n  enabled: true\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_TRUE(config->changes.enabled);
  EXPECT_FALSE(config->changes.listen);
}

TEST(ChangesConfig, OutOfRangeOrUnknownIsRefusedWithItsPathAndLine) {
  for (auto [bad, path] : {std::pair{"  max_consumers: 0\n", "changes.max_consumers"},
                           {"  buffer_events: 0\n", "changes.buffer_events"},
                           {"  heartbeat_ms: 5\n", "changes.heartbeat_ms"},
                           {"  source: replica\n", "changes.source"},
                           {"  max_transaction_events: 0\n", "changes.max_transaction_events"},
                           {"  max_events_per_second: -1\n", "changes.max_events_per_second"},
                           {"  replica_server_id: 0\n", "changes.replica_server_id"},
                           {"  listen: nowhere\n", "changes.listen"},
                           {"  tables: [\"a b\"]\n", "changes.tables[0]"},
                           {"  send_timeout_ms: 1\n", "changes.send_timeout_ms"},
                           {"  allow_remote: maybe\n", "changes.allow_remote"},
                           {"  rate: 5\n", "rate"}}) {
    fixture::expectRefusedAtLine6("changes", bad, path);
  }
}

}  // namespace
}  // namespace sp::conf
