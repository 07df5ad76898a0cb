// Config parsing and validation: good files, each kind of bad input, and that
// several problems are reported together, each with its key path and line.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

const char* kGood = R"(server:
  listen: 0.0.0.0:6033
  admin_listen: 127.0.0.1:6034
  threads: 4
  max_connections: 500
  max_packet_bytes: 1048576
  shutdown_grace_ms: 2500
  log_level: debug
users:
  - name: app
    password: app_pw
    default_database: im
  - name: reporting
    password: ""
    allow_empty_password: true
admin_users:
  - name: admin
    password: admin_pw
backends:
  - name: db0
    address: 10.0.0.1:3306
    user: proxy
    password: secret
    database: im
    max_connections: 32
    min_connections: 4
    connect_timeout_ms: 1500
    idle_timeout_ms: 30000
    ping_interval_ms: 5000
    query_timeout_ms: 60000
  - name: db1
    address: "[::1]:3307"
    user: proxy
shard_map: maps/shard_map.yaml
default_backend: db1
cache: /var/lib/shardproxy/shardmap.sqlite
)";

ConfigIssues issuesOf(std::string_view yaml) {
  auto result = parseConfig(yaml, kBase);
  EXPECT_FALSE(result.has_value()) << "expected the config to be rejected";
  return result ? ConfigIssues{} : result.error();
}

// The single issue of a config expected to have exactly one problem.
ConfigIssue onlyIssue(std::string_view yaml) {
  ConfigIssues issues = issuesOf(yaml);
  EXPECT_EQ(issues.size(), 1u) << formatIssues(issues, "test.yaml");
  return issues.empty() ? ConfigIssue{} : issues.front();
}

bool mentions(const ConfigIssue& issue, std::string_view text) {
  return issue.message.find(text) != std::string::npos;
}

TEST(ConfigGood, ParsesEveryKey) {
  auto result = parseConfig(kGood, kBase);
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), "good.yaml");
  const Config& c = *result;
  EXPECT_EQ(c.server.listen.host, "0.0.0.0");
  EXPECT_EQ(c.server.listen.port, 6033);
  ASSERT_TRUE(c.server.admin_listen.has_value());
  EXPECT_EQ(c.server.admin_listen->port, 6034);
  EXPECT_EQ(c.server.threads, 4u);
  EXPECT_EQ(c.server.max_connections, 500u);
  EXPECT_EQ(c.server.max_packet_bytes, 1048576u);
  EXPECT_EQ(c.server.shutdown_grace_ms, 2500u);
  EXPECT_EQ(c.server.log_level, "debug");
  ASSERT_EQ(c.users.size(), 2u);
  EXPECT_EQ(c.users[0].name, "app");
  EXPECT_EQ(c.users[0].password, "app_pw");
  EXPECT_EQ(c.users[0].default_database, "im");
  EXPECT_EQ(c.users[1].password, "");
  EXPECT_EQ(c.users[1].default_database, "");
  ASSERT_EQ(c.admin_users.size(), 1u);
  EXPECT_EQ(c.admin_users[0].name, "admin");
  ASSERT_EQ(c.backends.size(), 2u);
  const BackendConfig& db0 = c.backends[0];
  EXPECT_EQ(db0.name, "db0");
  EXPECT_EQ(db0.address.host, "10.0.0.1");
  EXPECT_EQ(db0.address.port, 3306);
  EXPECT_EQ(db0.user, "proxy");
  EXPECT_EQ(db0.password, "secret");
  EXPECT_EQ(db0.database, "im");
  EXPECT_EQ(db0.max_connections, 32u);
  EXPECT_EQ(db0.min_connections, 4u);
  EXPECT_EQ(db0.connect_timeout_ms, 1500u);
  EXPECT_EQ(db0.idle_timeout_ms, 30000u);
  EXPECT_EQ(db0.ping_interval_ms, 5000u);
  EXPECT_EQ(db0.query_timeout_ms, 60000u);
  EXPECT_EQ(c.backends[1].address.host, "::1");
  EXPECT_EQ(c.backends[1].address.port, 3307);
  EXPECT_EQ(c.backends[1].password, "");
  EXPECT_EQ(c.backends[1].max_connections, 64u);  // default
  EXPECT_EQ(c.shard_map_path, "/etc/shardproxy/maps/shard_map.yaml");
  EXPECT_EQ(c.default_backend, "db1");
  EXPECT_EQ(c.cache_path, "/var/lib/shardproxy/shardmap.sqlite");
  ASSERT_NE(c.findBackend("db1"), nullptr);
  EXPECT_EQ(c.findBackend("db1")->address.port, 3307);
  EXPECT_EQ(c.findBackend("db9"), nullptr);
  ASSERT_NE(c.findUser("reporting"), nullptr);
  EXPECT_EQ(c.findUser("admin"), nullptr);  // admin accounts are separate
}

TEST(ConfigGood, DefaultsWhenOmitted) {
  auto result = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), "min.yaml");
  const Config& c = *result;
  EXPECT_EQ(c.server.listen.host, "127.0.0.1");
  EXPECT_EQ(c.server.listen.port, 6033);
  EXPECT_FALSE(c.server.admin_listen.has_value());
  EXPECT_EQ(c.server.max_packet_bytes, 64u << 20);
  EXPECT_EQ(c.server.log_level, "info");
  EXPECT_EQ(c.default_backend, "db0");  // the only backend becomes the default
  EXPECT_TRUE(c.shard_map_path.empty());
  EXPECT_TRUE(c.cache_path.empty());
}

TEST(ConfigGood, RelativePathsResolveAgainstBaseDir) {
  auto result = parseConfig(minimalWith("shard_map: ./a/../map.yaml\ncache: ../run/c.sqlite\n"),
                            "/opt/sp/conf");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->shard_map_path, "/opt/sp/conf/map.yaml");
  EXPECT_EQ(result->cache_path, "/opt/sp/run/c.sqlite");
}

TEST(ConfigGood, NullOptionalValuesMeanUnset) {
  auto result = parseConfig(minimalWith("server:\n  admin_listen: ~\nshard_map:\n"), kBase);
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), "t.yaml");
  EXPECT_FALSE(result->server.admin_listen.has_value());
  EXPECT_TRUE(result->shard_map_path.empty());
}

TEST(ConfigGood, AdminAllowRemote) {
  auto off = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(off.has_value());
  EXPECT_FALSE(off->server.admin_allow_remote);
  auto on = parseConfig(minimalWith("server:\n  admin_allow_remote: true\n"), kBase);
  ASSERT_TRUE(on.has_value()) << formatIssues(on.error(), "t.yaml");
  EXPECT_TRUE(on->server.admin_allow_remote);
  auto bad = parseConfig(minimalWith("server:\n  admin_allow_remote: yes please\n"), kBase);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(formatIssues(bad.error(), "t.yaml").find("server.admin_allow_remote"), std::string::npos)
      << formatIssues(bad.error(), "t.yaml");
}

TEST(ConfigGood, LoadsFileAndRecordsSourcePath) {
  auto dir = std::filesystem::temp_directory_path() / "sp_conf_test";
  std::filesystem::create_directories(dir);
  auto file = dir / "proxy.yaml";
  std::ofstream(file) << minimalWith("shard_map: map.yaml\n");
  auto result = loadConfig(file.string());
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), file.string());
  EXPECT_EQ(result->source_path, file.lexically_normal().string());
  EXPECT_EQ(result->shard_map_path, (dir / "map.yaml").string());
  std::filesystem::remove_all(dir);
}

TEST(ConfigShipped, ExampleConfigIsValid) {
  const std::string path = std::string(SP_SOURCE_DIR) + "/conf/shardproxy.yaml";
  auto result = loadConfig(path);
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), path);
  const Config& c = *result;
  EXPECT_EQ(formatHostPort(c.server.listen), "127.0.0.1:6033");
  ASSERT_TRUE(c.server.admin_listen.has_value());
  EXPECT_EQ(formatHostPort(*c.server.admin_listen), "127.0.0.1:6034");
  EXPECT_EQ(c.server.threads, 0u);
  EXPECT_EQ(c.server.max_packet_bytes, 67108864u);
  ASSERT_EQ(c.backends.size(), 2u);
  EXPECT_EQ(formatHostPort(c.backends[0].address), "127.0.0.1:3307");
  EXPECT_EQ(formatHostPort(c.backends[1].address), "127.0.0.1:3308");
  EXPECT_EQ(c.default_backend, "db0");
  ASSERT_NE(c.findUser("app"), nullptr);
  EXPECT_EQ(c.findUser("app")->password, "app_pw");
  EXPECT_EQ(c.shard_map_path, std::string(SP_SOURCE_DIR) + "/conf/shard_map.yaml");
  EXPECT_TRUE(std::filesystem::exists(c.shard_map_path));
  EXPECT_EQ(c.cache_path, std::string(SP_SOURCE_DIR) + "/.run/shardmap.sqlite");
}

TEST(ConfigShipped, ExampleShardMapIsWellFormedYaml) {
  YAML::Node map = YAML::LoadFile(std::string(SP_SOURCE_DIR) + "/conf/shard_map.yaml");
  EXPECT_EQ(map["version"].as<int>(), 1);
  ASSERT_TRUE(map["tables"].IsMap());
  EXPECT_EQ(map["tables"].size(), 4u);
  EXPECT_EQ(map["tables"]["msg"]["table"].as<std::string>(), "msg_{shard:02}");
  EXPECT_EQ(map["tables"]["tg_channel_message"]["shards"]["s02"]["backend"].as<std::string>(), "db1");
}

TEST(ConfigBad, UnknownKeySuggestsClosest) {
  ConfigIssue issue = onlyIssue(minimalWith("server:\n  lisen: 127.0.0.1:1\n"));
  EXPECT_EQ(issue.path, "server.lisen");
  EXPECT_EQ(issue.line, 6);
  EXPECT_TRUE(mentions(issue, "did you mean 'listen'")) << issue.message;
}

TEST(ConfigBad, UnknownKeyFarFromAnyListsAccepted) {
  ConfigIssue issue = onlyIssue(minimalWith("frobnicate: 1\n"));
  EXPECT_EQ(issue.path, "frobnicate");
  EXPECT_EQ(issue.line, 5);
  EXPECT_TRUE(mentions(issue, "expected one of")) << issue.message;
  EXPECT_TRUE(mentions(issue, "default_backend")) << issue.message;
}

TEST(ConfigBad, UnknownKeyInsideBackend) {
  ConfigIssue issue = onlyIssue(
      "backends:\n  - name: db0\n    address: 127.0.0.1:3307\n    user: p\n    max_conections: 3\n");
  EXPECT_EQ(issue.path, "backends[0].max_conections");
  EXPECT_EQ(issue.line, 5);
  EXPECT_TRUE(mentions(issue, "did you mean 'max_connections'")) << issue.message;
}

TEST(ConfigBad, DuplicateKey) {
  ConfigIssue issue = onlyIssue(minimalWith("server:\n  threads: 1\n  threads: 2\n"));
  EXPECT_EQ(issue.path, "server.threads");
  EXPECT_EQ(issue.line, 7);
  EXPECT_TRUE(mentions(issue, "duplicate key"));
}

TEST(ConfigBad, WrongTypes) {
  ConfigIssues issues = issuesOf(minimalWith(
      "server:\n  threads: four\n  listen: [a, b]\nusers_extra: 1\n"));
  // users_extra is an unknown key; the two type errors must be there too.
  ASSERT_EQ(issues.size(), 3u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "server.threads");
  EXPECT_EQ(issues[0].line, 6);
  EXPECT_TRUE(mentions(issues[0], "must be an integer")) << issues[0].message;
  EXPECT_EQ(issues[1].path, "server.listen");
  EXPECT_EQ(issues[1].line, 7);
  EXPECT_TRUE(mentions(issues[1], "must be a string")) << issues[1].message;
  EXPECT_EQ(issues[2].path, "users_extra");
}

TEST(ConfigBad, SectionOfWrongShape) {
  ConfigIssues issues = issuesOf("server: 5\nusers: {name: a}\nbackends: nope\n");
  ASSERT_EQ(issues.size(), 3u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "server");
  EXPECT_TRUE(mentions(issues[0], "must be a mapping"));
  EXPECT_EQ(issues[1].path, "users");
  EXPECT_TRUE(mentions(issues[1], "must be a list"));
  EXPECT_EQ(issues[1].line, 2);
  EXPECT_EQ(issues[2].path, "backends");
  EXPECT_EQ(issues[2].line, 3);
}

TEST(ConfigBad, MissingRequiredUserKeys) {
  ConfigIssues issues = issuesOf("users:\n  - name: app\n  - password: x\n");
  ASSERT_EQ(issues.size(), 2u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "users[0].password");
  EXPECT_EQ(issues[0].line, 2);
  EXPECT_TRUE(mentions(issues[0], "missing required key 'password'"));
  EXPECT_EQ(issues[1].path, "users[1].name");
  EXPECT_EQ(issues[1].line, 3);
}

TEST(ConfigBad, MissingRequiredBackendKeys) {
  ConfigIssues issues = issuesOf("backends:\n  - name: db0\n    password: ''\n");
  ASSERT_EQ(issues.size(), 2u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "backends[0].address");
  EXPECT_EQ(issues[1].path, "backends[0].user");
  EXPECT_EQ(issues[0].line, 2);
}

TEST(ConfigBad, EmptyRequiredValues) {
  ConfigIssues issues = issuesOf("users:\n  - name: ''\n    password: x\n"
                                 "backends:\n  - name: db0\n    address: 127.0.0.1:1\n    user:\n");
  ASSERT_EQ(issues.size(), 2u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "users[0].name");
  EXPECT_TRUE(mentions(issues[0], "must not be empty"));
  EXPECT_EQ(issues[1].path, "backends[0].user");
  EXPECT_TRUE(mentions(issues[1], "missing value"));
}

struct HostPortCase {
  const char* text;
  const char* expected_error;  // nullptr: valid
};

TEST(ConfigBad, HostPortForms) {
  const HostPortCase cases[] = {
      {"127.0.0.1:3306", nullptr},
      {"db.example.com:1", nullptr},
      {"[::1]:65535", nullptr},
      {"127.0.0.1", "port is missing"},
      {":3306", "empty host"},
      {"host:", "non-numeric port"},
      {"host:33o6", "non-numeric port"},
      {"host:0", "out of range"},
      {"host:65536", "out of range"},
      {"host:99999999999999999999", "out of range"},
      {"::1:3306", "IPv6"},
      {"[::1]3306", "host:port"},
  };
  for (const auto& c : cases) {
    auto parsed = parseHostPort(c.text);
    if (c.expected_error == nullptr) {
      EXPECT_TRUE(parsed.has_value()) << c.text << ": " << parsed.error();
    } else {
      ASSERT_FALSE(parsed.has_value()) << c.text;
      EXPECT_NE(parsed.error().find(c.expected_error), std::string::npos)
          << c.text << ": " << parsed.error();
    }
  }
}

TEST(ConfigBad, BadAddressInConfigHasLine) {
  ConfigIssue issue = onlyIssue("backends:\n  - name: db0\n    address: 127.0.0.1:70000\n    user: p\n");
  EXPECT_EQ(issue.path, "backends[0].address");
  EXPECT_EQ(issue.line, 3);
  EXPECT_TRUE(mentions(issue, "out of range")) << issue.message;
}

TEST(ConfigBad, DuplicateNames) {
  ConfigIssues issues = issuesOf(
      "users:\n  - {name: app, password: a}\n  - {name: app, password: b}\n"
      "backends:\n  - {name: db0, address: 'h:1', user: u}\n  - {name: db0, address: 'h:2', user: u}\n"
      "default_backend: db0\n");
  ASSERT_EQ(issues.size(), 2u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "users[1].name");
  EXPECT_EQ(issues[0].line, 3);
  EXPECT_TRUE(mentions(issues[0], "first defined on line 2")) << issues[0].message;
  EXPECT_EQ(issues[1].path, "backends[1].name");
  EXPECT_EQ(issues[1].line, 6);
}

TEST(ConfigBad, DefaultBackendNotABackend) {
  ConfigIssue issue = onlyIssue(minimalWith("default_backend: db00\n"));
  EXPECT_EQ(issue.path, "default_backend");
  EXPECT_EQ(issue.line, 5);
  EXPECT_TRUE(mentions(issue, "did you mean 'db0'")) << issue.message;
}

TEST(ConfigBad, DefaultBackendRequiredWithSeveralBackends) {
  ConfigIssue issue = onlyIssue(
      "backends:\n  - {name: db0, address: 'h:1', user: u}\n  - {name: db1, address: 'h:2', user: u}\n");
  EXPECT_EQ(issue.path, "default_backend");
  EXPECT_TRUE(mentions(issue, "more than one backend"));
}

TEST(ConfigBad, NumericRanges) {
  ConfigIssues issues = issuesOf(minimalWith(
      "server:\n  threads: 5000\n  max_connections: 0\n  max_packet_bytes: 1023\n"
      "  shutdown_grace_ms: -1\n"));
  ASSERT_EQ(issues.size(), 4u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "server.threads");
  EXPECT_EQ(issues[1].path, "server.max_connections");
  EXPECT_EQ(issues[2].path, "server.max_packet_bytes");
  EXPECT_TRUE(mentions(issues[2], "[1024, 1073741824]")) << issues[2].message;
  EXPECT_EQ(issues[3].path, "server.shutdown_grace_ms");
  EXPECT_EQ(issues[3].line, 9);
}

TEST(ConfigBad, PacketSizeBounds) {
  EXPECT_TRUE(parseConfig(minimalWith("server: {max_packet_bytes: 1024}\n"), kBase).has_value());
  EXPECT_TRUE(parseConfig(minimalWith("server: {max_packet_bytes: 1073741824}\n"), kBase).has_value());
  EXPECT_FALSE(parseConfig(minimalWith("server: {max_packet_bytes: 1073741825}\n"), kBase).has_value());
}

TEST(ConfigBad, MinConnectionsAboveMax) {
  ConfigIssue issue = onlyIssue(
      "backends:\n  - name: db0\n    address: h:1\n    user: u\n    max_connections: 2\n"
      "    min_connections: 3\n");
  EXPECT_EQ(issue.path, "backends[0].min_connections");
  EXPECT_EQ(issue.line, 6);
}

TEST(ConfigBad, LogLevel) {
  ConfigIssue issue = onlyIssue(minimalWith("server:\n  log_level: debgu\n"));
  EXPECT_EQ(issue.path, "server.log_level");
  EXPECT_EQ(issue.line, 6);
  EXPECT_TRUE(mentions(issue, "did you mean 'debug'")) << issue.message;
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_TRUE(parseConfig(minimalWith(std::string("server: {log_level: ") + level + "}\n"), kBase))
        << level;
  }
}

TEST(ConfigBad, AdminListenSameAsListen) {
  ConfigIssue issue = onlyIssue(
      minimalWith("server:\n  listen: 127.0.0.1:7000\n  admin_listen: 127.0.0.1:7000\n"));
  EXPECT_EQ(issue.path, "server.admin_listen");
  EXPECT_EQ(issue.line, 7);
}

TEST(ConfigBad, BadBackendName) {
  ConfigIssue issue = onlyIssue("backends:\n  - {name: 'db 0', address: 'h:1', user: u}\n");
  EXPECT_EQ(issue.path, "backends[0].name");
  EXPECT_EQ(issue.line, 2);
}

TEST(ConfigBad, MalformedYamlHasLine) {
  ConfigIssue issue = onlyIssue("server:\n  listen: 127.0.0.1:1\n  threads: [1, 2\nusers: []\n");
  EXPECT_EQ(issue.path, "");
  EXPECT_GT(issue.line, 2);
  EXPECT_TRUE(mentions(issue, "malformed YAML")) << issue.message;
}

TEST(ConfigBad, BadIndentationIsMalformed) {
  ConfigIssue issue = onlyIssue("server:\n  listen: a:1\n threads: 2\n");
  EXPECT_EQ(issue.line, 3);
}

TEST(ConfigBad, EmptyAndNonMappingDocuments) {
  EXPECT_TRUE(mentions(onlyIssue(""), "empty"));
  EXPECT_TRUE(mentions(onlyIssue("# only a comment\n"), "empty"));
  ConfigIssue list = onlyIssue("- a\n- b\n");
  EXPECT_TRUE(mentions(list, "top level must be a mapping"));
  EXPECT_EQ(list.line, 1);
}

TEST(ConfigBad, MissingFile) {
  auto result = loadConfig("/nonexistent/shardproxy.yaml");
  ASSERT_FALSE(result.has_value());
  ASSERT_EQ(result.error().size(), 1u);
  EXPECT_EQ(result.error()[0].line, 0);
  EXPECT_TRUE(mentions(result.error()[0], "cannot open"));
}

TEST(ConfigBad, ManyProblemsReportedTogetherWithLines) {
  const char* text =
      "server:\n"                           // 1
      "  listen: 127.0.0.1\n"                // 2 bad host:port
      "  threds: 2\n"                        // 3 typo
      "  log_level: loud\n"                  // 4 bad choice
      "users:\n"                             // 5
      "  - name: app\n"                      // 6 missing password (reported at 6)
      "backends:\n"                          // 7
      "  - name: db0\n"                      // 8
      "    address: 127.0.0.1:3307\n"        // 9
      "    user: proxy\n"                    // 10
      "    max_connections: 0\n"             // 11 out of range
      "  - name: db0\n"                      // 12 duplicate name
      "    address: 127.0.0.1:3308\n"        // 13
      "    user: proxy\n"                    // 14
      "default_backend: db2\n";              // 15 not a backend
  ConfigIssues issues = issuesOf(text);
  struct Expected {
    const char* path;
    int line;
  };
  const Expected expected[] = {
      {"server.listen", 2},          {"server.threds", 3},
      {"server.log_level", 4},       {"users[0].password", 6},
      {"backends[0].max_connections", 11}, {"backends[1].name", 12},
      {"default_backend", 15},
  };
  ASSERT_EQ(issues.size(), std::size(expected)) << formatIssues(issues, "t.yaml");
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(issues[i].path, expected[i].path) << i;
    EXPECT_EQ(issues[i].line, expected[i].line) << expected[i].path;
  }
  std::string text_out = formatIssues(issues, "proxy.yaml");
  EXPECT_NE(text_out.find("proxy.yaml:3: server.threds: unknown key 'threds' (did you mean 'threads'?)\n"),
            std::string::npos)
      << text_out;
  EXPECT_EQ(std::count(text_out.begin(), text_out.end(), '\n'), 7);
}

TEST(ConfigFormat, IssueWithoutLineOrPath) {
  ConfigIssues issues = {{"", 0, "cannot open 'x'"}, {"a.b", 0, "bad"}, {"", 4, "malformed"}};
  EXPECT_EQ(formatIssues(issues, "f.yaml"),
            "f.yaml: cannot open 'x'\nf.yaml: a.b: bad\nf.yaml:4: malformed\n");
}

TEST(ConfigFormat, HostPortRoundTrip) {
  EXPECT_EQ(formatHostPort({"::1", 6033}), "[::1]:6033");
  EXPECT_EQ(formatHostPort({"localhost", 1}), "localhost:1");
  auto parsed = parseHostPort(formatHostPort({"fe80::1", 3306}));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->host, "fe80::1");
}

}  // namespace
}  // namespace sp::conf

namespace sp::conf {
namespace {

TEST(ConfigObservability, DefaultsWhenOmitted) {
  auto result = parseConfig("backends:\n  - name: db0\n    address: 127.0.0.1:3307\n    user: proxy\n", kBase);
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), "t.yaml");
  EXPECT_FALSE(result->server.metrics_listen.has_value());
  EXPECT_FALSE(result->server.metrics_allow_remote);
  EXPECT_TRUE(result->log.slow_query_file.empty());
  EXPECT_EQ(result->log.slow_query_ms, 1000u);
  EXPECT_FALSE(result->log.slow_query_keep_values);
  EXPECT_EQ(result->digests.max_entries, 1000u);
}

TEST(ConfigObservability, ReadsEveryKey) {
  auto result = parseConfig(R"(server:
  metrics_listen: 127.0.0.1:9104
  metrics_allow_remote: true
log:
  slow_query_file: ../log/slow.jsonl
  slow_query_ms: 250
  slow_query_keep_values: true
digests:
  max_entries: 50
backends:
  - name: db0
    address: 127.0.0.1:3307
    user: proxy
)", "/opt/sp/conf");
  ASSERT_TRUE(result.has_value()) << formatIssues(result.error(), "t.yaml");
  ASSERT_TRUE(result->server.metrics_listen.has_value());
  EXPECT_EQ(result->server.metrics_listen->port, 9104);
  EXPECT_TRUE(result->server.metrics_allow_remote);
  EXPECT_EQ(result->log.slow_query_file, "/opt/sp/log/slow.jsonl");
  EXPECT_EQ(result->log.slow_query_ms, 250u);
  EXPECT_TRUE(result->log.slow_query_keep_values);
  EXPECT_EQ(result->digests.max_entries, 50u);
}

TEST(ConfigObservability, RejectsBadValuesWithTheirPaths) {
  auto result = parseConfig(R"(server:
  listen: 127.0.0.1:6033
  metrics_listen: 127.0.0.1:6033
log:
  slow_query_ms: -1
  slow_query_keep_values: maybe
  slow_query_fil: x
digests:
  max_entries: 2000000
backends:
  - name: db0
    address: 127.0.0.1:3307
    user: proxy
)", kBase);
  ASSERT_FALSE(result.has_value());
  std::string text = formatIssues(result.error(), "t.yaml");
  for (const char* path : {"server.metrics_listen", "log.slow_query_ms", "log.slow_query_keep_values",
                           "log.slow_query_fil", "digests.max_entries"}) {
    EXPECT_NE(text.find(path), std::string::npos) << path << " missing in:\n" << text;
  }
}

}  // namespace
}  // namespace sp::conf
