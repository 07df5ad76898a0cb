// The `moves` section (issue 17): the limits of online moves; every key has a
// default, and a value out of its range is refused with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"

namespace sp::conf {
namespace {

constexpr const char* kBase = "/etc/shardproxy";

std::string minimalWith(std::string_view extra) {
  return std::string("users:\n  - {name: app, password: pw}\n"
                     "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n"
                     "cache: cache.sqlite\n") +
         std::string(extra);
}

TEST(MovesConfig, DefaultsWhenAbsent) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const MovesConfig& m = config->moves;
  EXPECT_EQ(m.batch_rows, 1000u);
  EXPECT_EQ(m.hold_timeout_ms, 1000u);
  EXPECT_EQ(m.hold_max_waiting, 10000u);
  EXPECT_EQ(m.cutover_attempts, 5u);
  EXPECT_EQ(m.cutover_lag_bytes, 65536u);
  EXPECT_EQ(m.catchup_rounds, 100u);
  EXPECT_EQ(m.catchup_batch_transactions, 500u);
  EXPECT_EQ(m.catchup_batch_bytes, 4u << 20);
}

TEST(MovesConfig, ParsesTunedValues) {
  auto config = parseConfig(minimalWith("moves:\n  catchup_rounds: 400\n  cutover_lag_bytes: 1024\n"
                                        "  catchup_batch_transactions: 50\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->moves.catchup_rounds, 400u);
  EXPECT_EQ(config->moves.cutover_lag_bytes, 1024u);
  EXPECT_EQ(config->moves.catchup_batch_transactions, 50u);
}

TEST(MovesConfig, OutOfRangeIsRefusedWithItsPathAndLine) {
  for (const char* bad : {"  catchup_rounds: 0\n", "  catchup_rounds: 100001\n", "  catchup_rounds: many\n"}) {
    auto config = parseConfig(minimalWith(std::string("moves:\n") + bad), kBase);
    ASSERT_FALSE(config) << bad;
    const std::string text = formatIssues(config.error(), "t.yaml");
    EXPECT_NE(text.find("moves.catchup_rounds"), std::string::npos) << text;
    EXPECT_NE(text.find("t.yaml:7"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace sp::conf
