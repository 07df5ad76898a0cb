// The `scatter` section: multi-shard write policy, merge memory cap and
// per-shard timeout; bad values are reported with key path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(ScatterConfig, Defaults) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->scatter.multi_shard_writes, MultiShardWrites::kRefuse);
  EXPECT_EQ(config->scatter.max_merge_bytes, 256ull << 20);
  EXPECT_EQ(config->scatter.shard_timeout_ms, 0u);
}

TEST(ScatterConfig, ParsesEveryKey) {
  auto config = parseConfig(minimalWith("scatter:\n  multi_shard_writes: best_effort\n"
                                        "  max_merge_bytes: 1048576\n  shard_timeout_ms: 2500\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->scatter.multi_shard_writes, MultiShardWrites::kBestEffort);
  EXPECT_EQ(config->scatter.max_merge_bytes, 1048576u);
  EXPECT_EQ(config->scatter.shard_timeout_ms, 2500u);
  auto refuse = parseConfig(minimalWith("scatter: {multi_shard_writes: refuse}\n"), kBase);
  ASSERT_TRUE(refuse);
  EXPECT_EQ(refuse->scatter.multi_shard_writes, MultiShardWrites::kRefuse);
  EXPECT_TRUE(parseConfig(minimalWith("scatter:\n"), kBase).has_value()) << "an empty section keeps the defaults";
}

TEST(ScatterConfig, BadValuesNamePathAndLine) {
  auto config = parseConfig(minimalWith("scatter:\n  multi_shard_writes: best_efort\n"
                                        "  max_merge_bytes: 1000\n  shard_timeout_ms: -5\n  shard_timeout: 3\n"),
                            kBase);
  ASSERT_FALSE(config);
  const ConfigIssues& issues = config.error();
  ASSERT_EQ(issues.size(), 4u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "scatter.multi_shard_writes");
  EXPECT_EQ(issues[0].line, 6);
  EXPECT_NE(issues[0].message.find("did you mean 'best_effort'"), std::string::npos) << issues[0].message;
  EXPECT_EQ(issues[1].path, "scatter.max_merge_bytes");
  EXPECT_EQ(issues[1].line, 7);
  EXPECT_NE(issues[1].message.find("[1048576, 68719476736]"), std::string::npos) << issues[1].message;
  EXPECT_EQ(issues[2].path, "scatter.shard_timeout_ms");
  EXPECT_EQ(issues[2].line, 8);
  EXPECT_EQ(issues[3].path, "scatter.shard_timeout");
  EXPECT_NE(issues[3].message.find("did you mean 'shard_timeout_ms'"), std::string::npos) << issues[3].message;
  std::string text = formatIssues(issues, "proxy.yaml");
  EXPECT_NE(text.find("proxy.yaml:6: scatter.multi_shard_writes: "), std::string::npos) << text;
  EXPECT_NE(text.find("proxy.yaml:8: scatter.shard_timeout_ms: "), std::string::npos) << text;
}

TEST(ScatterConfig, SectionMustBeAMapping) {
  auto config = parseConfig(minimalWith("scatter: best_effort\n"), kBase);
  ASSERT_FALSE(config);
  ASSERT_EQ(config.error().size(), 1u) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config.error()[0].path, "scatter");
  EXPECT_EQ(config.error()[0].line, 5);
}

TEST(ScatterConfig, MergeMemoryOfAllStatements) {
  auto defaults = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(defaults) << formatIssues(defaults.error(), "t.yaml");
  EXPECT_EQ(defaults->scatter.max_merge_bytes_total, 1ull << 30);
  auto config = parseConfig(minimalWith("scatter:\n  max_merge_bytes_total: 2097152\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->scatter.max_merge_bytes_total, 2097152u);
  auto bad = parseConfig(minimalWith("scatter:\n  max_merge_bytes_total: 4096\n"), kBase);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error()[0].path, "scatter.max_merge_bytes_total");
  EXPECT_NE(bad.error()[0].message.find("[1048576, 68719476736]"), std::string::npos) << bad.error()[0].message;
}

}  // namespace
}  // namespace sp::conf
