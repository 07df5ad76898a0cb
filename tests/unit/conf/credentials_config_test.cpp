// Credentials and the statement policy keys of `users` / `admin_users`
// (issue 14): password or password_hash, empty passwords, per-user rights.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
// PASSWORD('app_pw') in MariaDB.
constexpr const char* kAppPwHash = "*95BE1A04B76EE9AB97CEE8436421F2D15539B738";

std::string withUsers(std::string_view users, std::string_view admin_users = "  - {name: admin, password: a}\n") {
  return "users:\n" + std::string(users) + "admin_users:\n" + std::string(admin_users) +
         "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n";
}

ConfigIssue oneIssue(const std::string& yaml) {
  auto config = parseConfig(yaml, kBase);
  EXPECT_FALSE(config.has_value()) << "expected the config to be rejected";
  if (config) return {};
  EXPECT_EQ(config.error().size(), 1u) << formatIssues(config.error(), "t.yaml");
  return config.error().front();
}

TEST(CredentialsConfig, DefaultsAreLeastPrivilege) {
  auto config = parseConfig(withUsers("  - {name: app, password: pw}\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const UserAccount& app = config->users[0];
  EXPECT_EQ(app.password, "pw");
  EXPECT_EQ(app.password_hash, "");
  EXPECT_FALSE(app.allow_empty_password);
  EXPECT_FALSE(app.privileged);
  EXPECT_FALSE(app.allow_ddl);
  EXPECT_FALSE(app.physical_tables);
}

TEST(CredentialsConfig, ReplicationAccountOfABackend) {
  auto config = parseConfig(
      "users:\n  - {name: app, password: pw}\nadmin_users:\n  - {name: admin, password: a}\nbackends:\n"
      "  - {name: db0, address: 127.0.0.1:3307, user: proxy, replication_user: proxy_repl, "
      "replication_password: rp}\n"
      "  - {name: db1, address: 127.0.0.1:3308, user: proxy}\ndefault_backend: db0\n",
      kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->backends[0].replication_user, "proxy_repl");
  EXPECT_EQ(config->backends[0].replication_password, "rp");
  EXPECT_EQ(config->backends[1].replication_user, "");  // the backend's own account
}

TEST(CredentialsConfig, PolicyKeys) {
  auto config = parseConfig(
      withUsers("  - {name: app, password: pw, allow_ddl: true}\n"
                "  - {name: dba, password: pw, privileged: true, physical_tables: true}\n"),
      kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_TRUE(config->users[0].allow_ddl);
  EXPECT_FALSE(config->users[0].privileged);
  EXPECT_TRUE(config->users[1].privileged);
  EXPECT_TRUE(config->users[1].physical_tables);
}

TEST(CredentialsConfig, AllowLists) {
  auto config = parseConfig(
      withUsers("  - {name: app, password: pw}\n"
                "  - {name: reports, password: pw, allow_schemas: [im, 'app_*'], "
                "allow_tables: [msg, 'im.tg_channel_message', 'it_*', 'im.*']}\n"
                "  - {name: nothing, password: pw, allow_tables: []}\n"),
      kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_FALSE(config->users[0].allow_schemas);
  EXPECT_FALSE(config->users[0].allow_tables);
  EXPECT_EQ(*config->users[1].allow_schemas, (std::vector<std::string>{"im", "app_*"}));
  EXPECT_EQ(*config->users[1].allow_tables,
            (std::vector<std::string>{"msg", "im.tg_channel_message", "it_*", "im.*"}));
  ASSERT_TRUE(config->users[2].allow_tables);  // present and empty: no table at all
  EXPECT_TRUE(config->users[2].allow_tables->empty());
  ConfigIssue issue = oneIssue(withUsers("  - {name: app, password: pw, allow_tables: [msg, 'a.b.c']}\n"));
  EXPECT_EQ(issue.path, "users[0].allow_tables[1]");
  issue = oneIssue(withUsers("  - {name: app, password: pw, allow_schemas: ['im.x']}\n"));
  EXPECT_EQ(issue.path, "users[0].allow_schemas[0]");
  issue = oneIssue(withUsers("  - {name: app, password: pw, allow_tables: msg}\n"));
  EXPECT_EQ(issue.path, "users[0].allow_tables");
  issue = oneIssue(withUsers("  - {name: app, password: pw}\n", "  - {name: admin, password: a, allow_tables: [x]}\n"));
  EXPECT_NE(issue.message.find("allow_tables"), std::string::npos) << issue.message;  // users only
}

TEST(CredentialsConfig, HashIsNormalisedToUpperCase) {
  std::string lower = kAppPwHash;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto config = parseConfig(withUsers("  - {name: app, password_hash: '" + lower + "'}\n",
                                      "  - {name: admin, password_hash: '" + std::string(kAppPwHash) + "'}\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->users[0].password_hash, kAppPwHash);
  EXPECT_EQ(config->users[0].password, "");
  EXPECT_EQ(config->admin_users[0].password_hash, kAppPwHash);
}

TEST(CredentialsConfig, BadHashIsRefusedWithoutRepeatingIt) {
  for (const char* bad : {"95BE1A04B76EE9AB97CEE8436421F2D15539B738", "*95BE1A04B76EE9AB97CEE8436421F2D15539B73",
                          "*95BE1A04B76EE9AB97CEE8436421F2D15539B73G", "secret"}) {
    ConfigIssue issue = oneIssue(withUsers("  - {name: app, password_hash: '" + std::string(bad) + "'}\n"));
    EXPECT_EQ(issue.path, "users[0].password_hash") << bad;
    EXPECT_NE(issue.message.find("40 hex digits"), std::string::npos) << issue.message;
    EXPECT_EQ(issue.message.find(bad), std::string::npos) << issue.message;
  }
}

TEST(CredentialsConfig, PasswordAndHashTogetherRefused) {
  ConfigIssue issue =
      oneIssue(withUsers("  - {name: app, password: pw, password_hash: '" + std::string(kAppPwHash) + "'}\n"));
  EXPECT_EQ(issue.path, "users[0].password_hash");
  EXPECT_NE(issue.message.find("not both"), std::string::npos);
}

TEST(CredentialsConfig, EmptyOrMissingPasswordRefusedUnlessAllowed) {
  ConfigIssue empty = oneIssue(withUsers("  - {name: app, password: ''}\n"));
  EXPECT_EQ(empty.path, "users[0].password");
  EXPECT_NE(empty.message.find("allow_empty_password"), std::string::npos);
  ConfigIssue null_value = oneIssue(withUsers("  - {name: app, password: ~}\n"));
  EXPECT_EQ(null_value.path, "users[0].password");
  ConfigIssue missing = oneIssue(withUsers("  - {name: app}\n"));
  EXPECT_EQ(missing.path, "users[0].password");
  EXPECT_NE(missing.message.find("missing required key 'password'"), std::string::npos);
  ConfigIssue admin = oneIssue(withUsers("  - {name: app, password: pw}\n", "  - {name: admin, password: ''}\n"));
  EXPECT_EQ(admin.path, "admin_users[0].password");

  auto allowed = parseConfig(withUsers("  - {name: app, password: '', allow_empty_password: true}\n"
                                       "  - {name: ro, allow_empty_password: true}\n"),
                             kBase);
  ASSERT_TRUE(allowed) << formatIssues(allowed.error(), "t.yaml");
  EXPECT_EQ(allowed->users[0].password, "");
  EXPECT_TRUE(allowed->users[1].allow_empty_password);
}

TEST(CredentialsConfig, PolicyKeysBelongToUsersOnly) {
  ConfigIssue issue = oneIssue(withUsers("  - {name: app, password: pw}\n",
                                         "  - {name: admin, password: a, privileged: true}\n"));
  EXPECT_EQ(issue.path, "admin_users[0].privileged");
  EXPECT_NE(issue.message.find("unknown key"), std::string::npos);
}

TEST(CredentialsConfig, BooleansAreWords) {
  ConfigIssue issue = oneIssue(withUsers("  - {name: app, password: pw, allow_ddl: yes}\n"));
  EXPECT_EQ(issue.path, "users[0].allow_ddl");
}

}  // namespace
}  // namespace sp::conf
