// The admin port's SHOW LIMITS / SET LIMIT (proxy/admin/limit_command.hpp).
#include <gtest/gtest.h>

#include "proxy/admin/limit_command.hpp"
#include "proxy/core/statement_limit_table.hpp"

namespace sp::proxy {
namespace {

TEST(LimitCommand, ParsesEachForm) {
  auto show = parseLimitCommand("show limits;");
  ASSERT_TRUE(show && *show);
  EXPECT_EQ((*show)->kind, LimitCommand::Kind::kShow);
  auto user = parseLimitCommand("SET LIMIT FOR USER app max_per_second = 500, max_concurrent = 20");
  ASSERT_TRUE(user && *user) << (user ? user->error() : "");
  EXPECT_EQ((*user)->rule.user, "app");
  EXPECT_EQ((*user)->rule.max_per_second, 500u);
  EXPECT_EQ((*user)->rule.max_concurrent, 20u);
  auto digest = parseLimitCommand("SET LIMIT FOR DIGEST 'SELECT * FROM msg WHERE conv_id = ''x''' max_concurrent = 4");
  ASSERT_TRUE(digest && *digest) << (digest ? digest->error() : "");
  EXPECT_EQ((*digest)->rule.digest, "SELECT * FROM msg WHERE conv_id = 'x'");
  EXPECT_EQ((*digest)->rule.max_per_second, 0u);
  auto remove = parseLimitCommand("SET LIMIT FOR USER 'app-2'");
  ASSERT_TRUE(remove && *remove);
  EXPECT_EQ((*remove)->rule.user, "app-2");
  EXPECT_FALSE(parseLimitCommand("SET NAMES utf8").has_value());
  EXPECT_FALSE(parseLimitCommand("SHOW BACKENDS").has_value());
}

TEST(LimitCommand, MalformedOnesSayTheForm) {
  for (const char* bad : {"SET LIMIT USER app max_concurrent = 1", "SET LIMIT FOR GROUP x max_concurrent = 1",
                          "SET LIMIT FOR USER app max_concurrent 1", "SET LIMIT FOR USER app speed = 1",
                          "SET LIMIT FOR DIGEST select max_concurrent = 1",
                          "SET LIMIT FOR USER app max_concurrent = 1 max_per_second = 2", "SHOW LIMITS app"}) {
    auto r = parseLimitCommand(bad);
    ASSERT_TRUE(r && !*r) << bad;
    EXPECT_NE(r->error().find("usage:"), std::string::npos) << bad << ": " << r->error();
  }
  auto big = parseLimitCommand("SET LIMIT FOR USER app max_concurrent = 1000001");
  ASSERT_TRUE(big && !*big);
  EXPECT_EQ(big->error(), "max_concurrent takes 0 to 1000000");
}

TEST(LimitCommand, SetRefusesUnknownUsersAndShowListsRules) {
  StatementLimits limits({});
  auto set = parseLimitCommand("SET LIMIT FOR USER ghost max_concurrent = 1");
  ASSERT_TRUE(set && *set);
  EXPECT_TRUE(std::holds_alternative<AdminError>(runLimitCommand(limits, **set, false)));
  EXPECT_TRUE(limits.empty());
  EXPECT_TRUE(std::holds_alternative<AdminOk>(runLimitCommand(limits, **set, true)));
  auto shown = runLimitCommand(limits, LimitCommand{}, true);
  const auto& rows = std::get<LocalResult>(shown).rows;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "user");
  EXPECT_EQ(rows[0][1], "ghost");
  EXPECT_EQ(rows[0][3], "1");
}

TEST(LimitCommand, InAFleetTheRuleIsPublishedFirstAndNothingChangesWhenItIsNot) {
  StatementLimits limits({});
  auto set = parseLimitCommand("SET LIMIT FOR DIGEST 'SELECT * FROM msg WHERE conv_id = 7' max_per_second = 9");
  ASSERT_TRUE(set && *set);
  std::vector<conf::StatementLimitRule> published;
  LimitPublisher unreachable = [&](const conf::StatementLimitRule& rule) -> std::expected<void, std::string> {
    published.push_back(rule);
    return std::unexpected(std::string("etcd down"));
  };
  auto refused = runLimitCommand(limits, **set, true, unreachable);
  ASSERT_TRUE(std::holds_alternative<AdminError>(refused));
  EXPECT_EQ(std::get<AdminError>(refused).message,
            "shardproxy admin: the limit was not set (in a fleet it is set for every proxy): etcd down");
  EXPECT_TRUE(limits.empty());
  LimitPublisher etcd = [&](const conf::StatementLimitRule& rule) -> std::expected<void, std::string> {
    published.push_back(rule);
    return {};
  };
  EXPECT_TRUE(std::holds_alternative<AdminOk>(runLimitCommand(limits, **set, true, etcd)));
  ASSERT_EQ(published.size(), 2u);
  EXPECT_EQ(published[1].max_per_second, 9u);
  ASSERT_EQ(limits.rows().size(), 1u);
  EXPECT_EQ(limits.rows()[0].max_per_second, 9u);
}

}  // namespace
}  // namespace sp::proxy
