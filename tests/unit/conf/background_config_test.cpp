// The `background` section: when background work yields to the foreground;
// every key has a default, and a value out of its range is refused with its
// path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(BackgroundConfig, DefaultsWhenAbsent) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const BackgroundConfig& b = config->background;
  EXPECT_EQ(b.max_foreground_p99_ms, 0u);
  EXPECT_EQ(b.min_statements, 20u);
  EXPECT_EQ(b.max_replica_lag_s, 10u);
  EXPECT_EQ(b.max_pause_ms, 10'000u);
  EXPECT_EQ(b.check_ms, 250u);
}

TEST(BackgroundConfig, ParsesEveryKey) {
  auto config = parseConfig(minimalWith("background:\n  max_foreground_p99_ms: 40\n  min_statements: 5\n"
                                        "  max_replica_lag_s: 0\n  max_pause_ms: 0\n  check_ms: 100\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const BackgroundConfig& b = config->background;
  EXPECT_EQ(b.max_foreground_p99_ms, 40u);
  EXPECT_EQ(b.min_statements, 5u);
  EXPECT_EQ(b.max_replica_lag_s, 0u);
  EXPECT_EQ(b.max_pause_ms, 0u);
  EXPECT_EQ(b.check_ms, 100u);
}

TEST(BackgroundConfig, OutOfRangeOrUnknownIsRefusedWithItsPathAndLine) {
  for (auto [bad, path] : {std::pair{"  check_ms: 10\n", "background.check_ms"},
                           {"  min_statements: 0\n", "background.min_statements"},
                           {"  max_replica_lag_s: -1\n", "background.max_replica_lag_s"},
                           {"  max_foreground_p99: 5\n", "max_foreground_p99"}}) {
    fixture::expectRefusedAtLine6("background", bad, path);
  }
}

}  // namespace
}  // namespace sp::conf
