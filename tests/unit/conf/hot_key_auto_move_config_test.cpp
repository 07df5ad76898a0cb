// overload.hot_key_auto_move (the opt-in policy that moves a hot key to a
// shard of its own): off by default, every key read, and each bad value
// refused with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

std::string refusal(std::string_view overload_body) {
  auto config = parseConfig(minimalWith("overload:\n" + std::string(overload_body)), kBase);
  EXPECT_FALSE(config) << overload_body;
  return config ? std::string() : formatIssues(config.error(), "t.yaml");
}

TEST(HotKeyAutoMoveConfig, OffByDefault) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const HotKeyAutoMoveConfig& a = config->overload.hot_key_auto_move;
  EXPECT_FALSE(a.enabled);
  EXPECT_EQ(a.min_shard_share_pct, 50u);
  EXPECT_EQ(a.min_statements_per_second, 100u);
  EXPECT_EQ(a.sustain_seconds, 60u);
  EXPECT_EQ(a.cooldown_seconds, 600u);
  EXPECT_TRUE(a.target_shards.empty());
}

TEST(HotKeyAutoMoveConfig, ReadsEveryKey) {
  auto config = parseConfig(minimalWith("overload:\n  hot_key_auto_move:\n    enabled: true\n"
                                        "    min_shard_share_pct: 70\n    min_statements_per_second: 25\n"
                                        "    sustain_seconds: 5\n    cooldown_seconds: 3600\n"
                                        "    target_shards: [s02, s03]\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const HotKeyAutoMoveConfig& a = config->overload.hot_key_auto_move;
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.min_shard_share_pct, 70u);
  EXPECT_EQ(a.min_statements_per_second, 25u);
  EXPECT_EQ(a.sustain_seconds, 5u);
  EXPECT_EQ(a.cooldown_seconds, 3600u);
  EXPECT_EQ(a.target_shards, (std::vector<std::string>{"s02", "s03"}));
}

TEST(HotKeyAutoMoveConfig, AnEmptySectionKeepsTheDefaults) {
  auto config = parseConfig(minimalWith("overload:\n  hot_key_auto_move:\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_FALSE(config->overload.hot_key_auto_move.enabled);
}

TEST(HotKeyAutoMoveConfig, AValueOutOfRangeIsRefusedWithItsPathAndLine) {
  for (auto [bad, path] : {std::pair{"    min_shard_share_pct: 0\n", "overload.hot_key_auto_move.min_shard_share_pct"},
                           {"    min_shard_share_pct: 101\n", "overload.hot_key_auto_move.min_shard_share_pct"},
                           {"    min_statements_per_second: 0\n",
                            "overload.hot_key_auto_move.min_statements_per_second"},
                           {"    sustain_seconds: 0\n", "overload.hot_key_auto_move.sustain_seconds"},
                           {"    sustain_seconds: 86401\n", "overload.hot_key_auto_move.sustain_seconds"},
                           {"    cooldown_seconds: 5\n", "overload.hot_key_auto_move.cooldown_seconds"},
                           {"    enabled: yes\n", "overload.hot_key_auto_move.enabled"},
                           {"    target_shards: s02\n", "overload.hot_key_auto_move.target_shards"},
                           {"    target_shards: [s02, 's 03']\n", "overload.hot_key_auto_move.target_shards[1]"},
                           {"    sustain_second: 5\n", "overload.hot_key_auto_move.sustain_second"}}) {
    // The section starts on line 5, the key on line 7.
    const std::string text = refusal(std::string("  hot_key_auto_move:\n") + bad);
    EXPECT_NE(text.find(path), std::string::npos) << text;
    EXPECT_NE(text.find("t.yaml:7"), std::string::npos) << text;
  }
}

TEST(HotKeyAutoMoveConfig, AShardListedTwiceIsRefused) {
  const std::string text = refusal("  hot_key_auto_move:\n    target_shards: [s02, s02]\n");
  EXPECT_NE(text.find("overload.hot_key_auto_move.target_shards[1]"), std::string::npos) << text;
  EXPECT_NE(text.find("listed twice"), std::string::npos) << text;
}

TEST(HotKeyAutoMoveConfig, EnabledWithoutCountersIsRefused) {
  // The policy judges from SHOW HOT KEYS' counters: none, and it would never act.
  const std::string text = refusal("  hot_keys_tracked: 0\n  hot_key_auto_move:\n    enabled: true\n");
  EXPECT_NE(text.find("overload.hot_key_auto_move.enabled"), std::string::npos) << text;
  EXPECT_NE(text.find("hot_keys_tracked"), std::string::npos) << text;
  EXPECT_NE(text.find("t.yaml:8"), std::string::npos) << text;
}

}  // namespace
}  // namespace sp::conf
