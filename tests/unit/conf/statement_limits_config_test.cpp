// The `statement_limits` list: rules per user or digest, each checked with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(StatementLimitsConfig, ParsesUserAndDigestRules) {
  auto config = parseConfig(minimalWith("statement_limits:\n  - {user: app, max_per_second: 500, max_concurrent: 20}\n"
                                        "  - {digest: \"SELECT * FROM msg WHERE conv_id = ?\", max_concurrent: 4}\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  ASSERT_EQ(config->statement_limits.size(), 2u);
  EXPECT_EQ(config->statement_limits[0].user, "app");
  EXPECT_EQ(config->statement_limits[0].max_per_second, 500u);
  EXPECT_EQ(config->statement_limits[1].digest, "SELECT * FROM msg WHERE conv_id = ?");
  EXPECT_EQ(config->statement_limits[1].max_concurrent, 4u);
  EXPECT_TRUE(parseConfig(minimalWith(""), kBase)->statement_limits.empty());
}

TEST(StatementLimitsConfig, RefusesRulesThatMeanNothingOrTwice) {
  for (auto [bad, why] : {std::pair{"  - {max_concurrent: 1}\n", "exactly one of user: and digest:"},
                          {"  - {user: a, digest: x, max_concurrent: 1}\n", "exactly one of user: and digest:"},
                          {"  - {user: a}\n", "max_per_second:, max_concurrent: or both"},
                          {"  - {user: a, max_concurrent: 1}\n  - {user: a, max_per_second: 2}\n", "a second rule for user a"},
                          {"  - {user: a, max_concurrent: -1}\n", "statement_limits[0].max_concurrent"},
                          {"  - {user: a, rate: 3}\n", "rate"}}) {
    auto config = parseConfig(minimalWith(std::string("statement_limits:\n") + bad), kBase);
    ASSERT_FALSE(config) << bad;
    const std::string text = formatIssues(config.error(), "t.yaml");
    EXPECT_NE(text.find(why), std::string::npos) << text;
    EXPECT_NE(text.find("t.yaml:"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace sp::conf
