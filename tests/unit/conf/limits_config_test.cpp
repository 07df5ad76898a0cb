// Hostile-client settings (issue 12): the `limits` section and the server
// keys for the login phase and idle sessions; defaults, ranges and errors.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(LimitsConfig, Defaults) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->server.handshake_timeout_ms, 10000u);
  EXPECT_EQ(config->server.max_handshake_packet_bytes, 16384u);
  EXPECT_EQ(config->server.max_connections_per_host, 0u);
  EXPECT_EQ(config->server.wait_timeout_s, 28800u);
  EXPECT_EQ(config->limits.max_statement_nodes, 500000u);
  EXPECT_EQ(config->limits.max_expression_depth, 4000u);
  EXPECT_EQ(config->limits.max_in_list_values, 100000u);
}

TEST(LimitsConfig, ParsesEveryKey) {
  auto config = parseConfig(minimalWith("server:\n  handshake_timeout_ms: 1000\n  max_handshake_packet_bytes: 4096\n"
                                        "  max_connections_per_host: 20\n  wait_timeout_s: 60\n"
                                        "limits:\n  max_statement_nodes: 10000\n  max_expression_depth: 500\n"
                                        "  max_in_list_values: 2000\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->server.handshake_timeout_ms, 1000u);
  EXPECT_EQ(config->server.max_handshake_packet_bytes, 4096u);
  EXPECT_EQ(config->server.max_connections_per_host, 20u);
  EXPECT_EQ(config->server.wait_timeout_s, 60u);
  EXPECT_EQ(config->limits.max_statement_nodes, 10000u);
  EXPECT_EQ(config->limits.max_expression_depth, 500u);
  EXPECT_EQ(config->limits.max_in_list_values, 2000u);
  EXPECT_TRUE(parseConfig(minimalWith("limits:\n"), kBase).has_value()) << "an empty section keeps the defaults";
}

TEST(LimitsConfig, OutOfRangeValuesNamePathAndRange) {
  auto config = parseConfig(minimalWith("server:\n  handshake_timeout_ms: 10\n  max_handshake_packet_bytes: 100\n"
                                        "  wait_timeout_s: 0\n"
                                        "limits:\n  max_statement_nodes: 10\n  max_expression_depth: 1000000\n"
                                        "  max_in_list_values: 0\n  max_nodes: 5\n"),
                            kBase);
  ASSERT_FALSE(config);
  const ConfigIssues& issues = config.error();
  ASSERT_EQ(issues.size(), 7u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "server.handshake_timeout_ms");
  EXPECT_NE(issues[0].message.find("[100, 86400000]"), std::string::npos) << issues[0].message;
  EXPECT_EQ(issues[1].path, "server.max_handshake_packet_bytes");
  EXPECT_NE(issues[1].message.find("[1024, 1048576]"), std::string::npos) << issues[1].message;
  EXPECT_EQ(issues[2].path, "server.wait_timeout_s");
  EXPECT_EQ(issues[3].path, "limits.max_statement_nodes");
  EXPECT_EQ(issues[4].path, "limits.max_expression_depth");
  EXPECT_NE(issues[4].message.find("[64, 10000]"), std::string::npos) << issues[4].message;
  EXPECT_EQ(issues[5].path, "limits.max_in_list_values");
  EXPECT_EQ(issues[6].path, "limits.max_nodes");
  EXPECT_NE(issues[6].message.find("max_statement_nodes"), std::string::npos) << issues[6].message;
}

TEST(LimitsConfig, SessionBudgetsAndPlanCache) {
  auto defaults = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(defaults) << formatIssues(defaults.error(), "t.yaml");
  EXPECT_EQ(defaults->limits.max_prepared_statements_per_session, 16382u);
  EXPECT_EQ(defaults->limits.max_long_data_bytes_per_session, 64ull << 20);
  EXPECT_EQ(defaults->limits.max_plan_cache_bytes, 64ull << 20);
  EXPECT_EQ(defaults->users[0].max_connections, 0u);

  auto config = parseConfig(minimalWith("limits:\n  max_prepared_statements_per_session: 10\n"
                                        "  max_long_data_bytes_per_session: 8589934592\n"
                                        "  max_plan_cache_bytes: 0\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->limits.max_prepared_statements_per_session, 10u);
  EXPECT_EQ(config->limits.max_long_data_bytes_per_session, 8ull << 30);
  EXPECT_EQ(config->limits.max_plan_cache_bytes, 0u);

  auto bad = parseConfig(minimalWith("limits:\n  max_prepared_statements_per_session: 0\n"
                                     "  max_long_data_bytes_per_session: 100\n"
                                     "  max_plan_cache_bytes: 1000000000000\n"),
                         kBase);
  ASSERT_FALSE(bad);
  ASSERT_EQ(bad.error().size(), 3u) << formatIssues(bad.error(), "t.yaml");
  EXPECT_EQ(bad.error()[0].path, "limits.max_prepared_statements_per_session");
  EXPECT_NE(bad.error()[0].message.find("[1, 1048576]"), std::string::npos) << bad.error()[0].message;
  EXPECT_EQ(bad.error()[1].path, "limits.max_long_data_bytes_per_session");
  EXPECT_EQ(bad.error()[2].path, "limits.max_plan_cache_bytes");
}

TEST(LimitsConfig, UserMaxConnections) {
  auto config = parseConfig("users:\n  - {name: app, password: pw, max_connections: 3}\n  - {name: b, password: pw}\n"
                            "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n",
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->users[0].max_connections, 3u);
  EXPECT_EQ(config->users[1].max_connections, 0u) << "no limit by default";
  auto bad = parseConfig("users:\n  - {name: app, password: pw, max_connections: -1}\n"
                         "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n",
                         kBase);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].path, "users[0].max_connections");
}

TEST(LimitsConfig, InteractiveTimeout) {
  auto defaults = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(defaults) << formatIssues(defaults.error(), "t.yaml");
  EXPECT_EQ(defaults->server.interactive_timeout_s, 28800u) << "MariaDB's default";
  auto config = parseConfig(minimalWith("server:\n  interactive_timeout_s: 3600\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->server.interactive_timeout_s, 3600u);
  auto bad = parseConfig(minimalWith("server:\n  interactive_timeout_s: 31536001\n"), kBase);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].path, "server.interactive_timeout_s");
  EXPECT_NE(bad.error()[0].message.find("[1, 31536000]"), std::string::npos) << bad.error()[0].message;
}

TEST(LimitsConfig, PinnedConnectionsPerUser) {
  auto defaults = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(defaults) << formatIssues(defaults.error(), "t.yaml");
  EXPECT_EQ(defaults->limits.max_pinned_connections_per_user, 0u) << "no limit unless configured";
  EXPECT_EQ(defaults->pinnedConnectionLimit("app"), 0u);

  auto config = parseConfig("limits:\n  max_pinned_connections_per_user: 8\n"
                            "users:\n  - {name: app, password: pw, max_pinned_connections: 2}\n"
                            "  - {name: b, password: pw}\n  - {name: c, password: pw, max_pinned_connections: 0}\n"
                            "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n",
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->pinnedConnectionLimit("app"), 2u) << "the user's own";
  EXPECT_EQ(config->pinnedConnectionLimit("b"), 8u) << "the limits default";
  EXPECT_EQ(config->pinnedConnectionLimit("c"), 0u) << "0 for one user: no limit for it";
  EXPECT_EQ(config->pinnedConnectionLimit("nobody"), 8u);

  auto bad = parseConfig("limits:\n  max_pinned_connections_per_user: -1\n"
                         "users:\n  - {name: app, password: pw, max_pinned_connections: 100001}\n"
                         "admin_users:\n  - {name: adm, password: pw, max_pinned_connections: 1}\n"
                         "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n",
                         kBase);
  ASSERT_FALSE(bad);
  ASSERT_EQ(bad.error().size(), 3u) << formatIssues(bad.error(), "t.yaml");
  EXPECT_EQ(bad.error()[0].path, "limits.max_pinned_connections_per_user");
  EXPECT_EQ(bad.error()[1].path, "users[0].max_pinned_connections");
  EXPECT_NE(bad.error()[1].message.find("[0, 100000]"), std::string::npos) << bad.error()[1].message;
  EXPECT_EQ(bad.error()[2].path, "admin_users[0].max_pinned_connections") << "admins run no SQL";
}

}  // namespace
}  // namespace sp::conf
