// The `overload` section's hot-key keys (overload.hot_key_concurrency,
// hot_key_max_queued, hot_keys_tracked, hot_key_max_per_second): defaults, every key read, and a
// value out of its range refused with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(OverloadConfig, HotKeyDefaultsWhenAbsent) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const OverloadConfig& o = config->overload;
  EXPECT_EQ(o.hot_key_concurrency, 0u);  // off unless set
  EXPECT_EQ(o.hot_key_max_queued, 1000u);
  EXPECT_EQ(o.hot_keys_tracked, 64u);
  EXPECT_EQ(o.hot_key_max_per_second, 0u);  // not paced unless set
  EXPECT_EQ(o.queue_timeout_ms, 1000u);
}

TEST(OverloadConfig, ReadsTheHotKeyKeys) {
  auto config = parseConfig(
      minimalWith("overload:\n  hot_key_concurrency: 3\n  hot_key_max_queued: 5\n  hot_keys_tracked: 128\n"
                  "  hot_key_max_per_second: 250\n"),
      kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const OverloadConfig& o = config->overload;
  EXPECT_EQ(o.hot_key_concurrency, 3u);
  EXPECT_EQ(o.hot_key_max_queued, 5u);
  EXPECT_EQ(o.hot_keys_tracked, 128u);
  EXPECT_EQ(o.hot_key_max_per_second, 250u);
}

TEST(OverloadConfig, AHotKeyValueOutOfRangeIsRefusedWithItsPathAndLine) {
  for (auto [bad, path] : {std::pair{"  hot_key_concurrency: 20000\n", "overload.hot_key_concurrency"},
                           {"  hot_key_max_queued: -1\n", "overload.hot_key_max_queued"},
                           {"  hot_keys_tracked: 5000\n", "overload.hot_keys_tracked"},
                           {"  hot_key_max_per_second: 1000001\n", "overload.hot_key_max_per_second"}}) {
    fixture::expectRefusedAtLine6("overload", bad, path);
  }
}

}  // namespace
}  // namespace sp::conf
