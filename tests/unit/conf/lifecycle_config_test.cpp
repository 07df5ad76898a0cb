// The `partitions` and `archive` sections (data lifecycle): defaults,
// durations for check_every, bounds, and problems with key path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(LifecycleConfig, Defaults) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->partitions.ahead, 3u);
  EXPECT_EQ(config->partitions.check_every_s, 0u);
  EXPECT_EQ(config->archive.batch_rows, 2000u);
  EXPECT_EQ(config->archive.pause_ms, 50u);
  EXPECT_EQ(config->archive.max_retries, 10u);
  EXPECT_TRUE(config->archive.export_dir.empty());
}

TEST(LifecycleConfig, DurationsAndPaths) {
  for (auto [text, seconds] : {std::pair{"1h", 3600u}, {"30s", 30u}, {"10m", 600u}, {"2d", 172800u}, {"45", 45u},
                               {"0", 0u}}) {
    auto config = parseConfig(minimalWith(std::string("partitions: {ahead: 2, check_every: ") + text + "}\n"), kBase);
    ASSERT_TRUE(config) << text << ": " << formatIssues(config.error(), "t.yaml");
    EXPECT_EQ(config->partitions.check_every_s, seconds) << text;
    EXPECT_EQ(config->partitions.ahead, 2u);
  }
  auto config = parseConfig(minimalWith("archive: {batch_rows: 500, pause_ms: 0, max_retries: 3, export_dir: exports}\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->archive.batch_rows, 500u);
  EXPECT_EQ(config->archive.pause_ms, 0u);
  EXPECT_EQ(config->archive.max_retries, 3u);
  EXPECT_EQ(config->archive.export_dir, "/etc/shardproxy/exports");
}

TEST(LifecycleConfig, BadValuesNamePathAndLine) {
  auto config = parseConfig(minimalWith("partitions:\n  ahead: 0\n  check_every: 1w\narchive:\n  batch_rows: 0\n"
                                        "  pause: 5\n"),
                            kBase);
  ASSERT_FALSE(config);
  const ConfigIssues& issues = config.error();
  ASSERT_EQ(issues.size(), 4u) << formatIssues(issues, "t.yaml");
  EXPECT_EQ(issues[0].path, "partitions.ahead");
  EXPECT_EQ(issues[0].line, 6);
  EXPECT_EQ(issues[1].path, "partitions.check_every");
  EXPECT_NE(issues[1].message.find("expected a duration such as 30s"), std::string::npos) << issues[1].message;
  EXPECT_EQ(issues[2].path, "archive.batch_rows");
  EXPECT_EQ(issues[3].path, "archive.pause");
  EXPECT_NE(issues[3].message.find("unknown key 'pause'"), std::string::npos) << issues[3].message;
  EXPECT_FALSE(parseConfig(minimalWith("partitions: {check_every: 32d}\n"), kBase).has_value());
}

}  // namespace
}  // namespace sp::conf
