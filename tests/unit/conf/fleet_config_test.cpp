// The `fleet` section (issue 19): a proxy's name and the etcd cluster; bad
// values are reported with key path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;

// The fixture's minimal config plus the `cache:` a fleet needs.
std::string fleetMinimalWith(std::string_view extra) {
  return std::string("users:\n  - {name: app, password: pw}\n"
                     "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n"
                     "cache: cache.sqlite\n") +
         std::string(extra);
}

std::string issuesText(std::string_view yaml) {
  auto config = parseConfig(yaml, kBase);
  EXPECT_FALSE(config) << "expected a refusal";
  return config ? "" : formatIssues(config.error(), "t.yaml");
}

TEST(FleetConfig, AbsentMeansAlone) {
  auto config = parseConfig(fleetMinimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_FALSE(config->fleet);
  auto null = parseConfig(fleetMinimalWith("fleet: ~\n"), kBase);
  ASSERT_TRUE(null);
  EXPECT_FALSE(null->fleet);
}

TEST(FleetConfig, ParsesEveryKeyWithDefaults) {
  auto config = parseConfig(fleetMinimalWith("fleet:\n  name: p1\n  etcd:\n    endpoints: [\"http://127.0.0.1:2379\", "
                                        "\"http://10.0.0.2:2379/\"]\n    prefix: /shardproxy/prod/\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  ASSERT_TRUE(config->fleet);
  const FleetConfig& f = *config->fleet;
  EXPECT_EQ(f.name, "p1");
  ASSERT_EQ(f.etcd_endpoints.size(), 2u);
  EXPECT_EQ(formatHostPort(f.etcd_endpoints[1]), "10.0.0.2:2379");
  EXPECT_EQ(f.etcd_prefix, "/shardproxy/prod");  // trailing '/' dropped
  EXPECT_EQ(f.request_timeout_ms, 2000u);
  EXPECT_EQ(f.lease_ttl_s, 5u);
  EXPECT_EQ(f.retry_max_ms, 2000u);
  EXPECT_EQ(f.max_response_bytes, 16u << 20);
  EXPECT_EQ(f.fence_ack_timeout_ms, 2000u);
  EXPECT_EQ(f.fence_serve_timeout_ms, 5000u);
  auto tuned = parseConfig(fleetMinimalWith("fleet: {name: p2, lease_ttl_s: 10, retry_max_ms: 500, fence_ack_timeout_ms: 300, "
                                       "fence_serve_timeout_ms: 800, etcd: {endpoints: "
                                       "[\"http://h:1\"], prefix: /x, request_timeout_ms: 300, max_response_bytes: 65536}}\n"),
                           kBase);
  ASSERT_TRUE(tuned) << formatIssues(tuned.error(), "t.yaml");
  EXPECT_EQ(tuned->fleet->lease_ttl_s, 10u);
  EXPECT_EQ(tuned->fleet->retry_max_ms, 500u);
  EXPECT_EQ(tuned->fleet->request_timeout_ms, 300u);
  EXPECT_EQ(tuned->fleet->max_response_bytes, 65536u);
  EXPECT_EQ(tuned->fleet->fence_ack_timeout_ms, 300u);
  EXPECT_EQ(tuned->fleet->fence_serve_timeout_ms, 800u);
}

TEST(FleetConfig, BadValuesNamePathAndLine) {
  std::string text = issuesText(fleetMinimalWith("fleet:\n  name: \"p 1\"\n  etcd:\n    endpoints: [\"https://h:2379\", "
                                            "\"127.0.0.1:2379\", \"http://h:0\"]\n    prefix: shardproxy\n"
                                            "  lease_ttl_s: 1\n"));
  EXPECT_NE(text.find("t.yaml:7: fleet.name: 'p 1' may only contain"), std::string::npos) << text;
  EXPECT_NE(text.find("fleet.etcd.endpoints[0]: 'https://h:2379': only http:// endpoints"), std::string::npos) << text;
  EXPECT_NE(text.find("fleet.etcd.endpoints[1]: '127.0.0.1:2379' must be an http:// URL"), std::string::npos) << text;
  EXPECT_NE(text.find("fleet.etcd.endpoints[2]:"), std::string::npos) << text;
  EXPECT_NE(text.find("t.yaml:10: fleet.etcd.prefix: 'shardproxy' must start with '/'"), std::string::npos) << text;
  EXPECT_NE(text.find("t.yaml:11: fleet.lease_ttl_s: 1 is out of range [2, 600]"), std::string::npos) << text;
}

TEST(FleetConfig, RequiredKeysAndTheCache) {
  std::string missing = issuesText(fleetMinimalWith("fleet: {etcd: {endpoints: []}}\n"));
  EXPECT_NE(missing.find("t.yaml:6: fleet.name: missing required key 'name'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("fleet.etcd.prefix: missing required key 'prefix'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("fleet.etcd.endpoints: needs at least one endpoint"), std::string::npos) << missing;
  std::string no_cache = issuesText(
      "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n"
      "fleet: {name: p1, etcd: {endpoints: [\"http://h:1\"], prefix: /x}}\n");
  EXPECT_NE(no_cache.find("t.yaml:3: fleet: a fleet member needs 'cache:'"), std::string::npos) << no_cache;
}

}  // namespace
}  // namespace sp::conf
