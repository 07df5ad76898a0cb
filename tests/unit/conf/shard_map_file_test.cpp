// The shard-map file as conf/ reads it: values with their lines, shape
// problems reported here (meaning is routing's: shard_map_validation_test).
#include <gtest/gtest.h>

#include <string>

#include "conf/shard_map_file.hpp"

namespace sp::conf {
namespace {

TEST(ShardMapFile, ReadsValuesWithTheirLines) {
  const char* yaml =
      "version: 3\n"                                                  // 1
      "tables:\n"                                                     // 2
      "  msg:\n"                                                      // 3
      "    key: conv_id\n"                                            // 4
      "    method: mod\n"                                             // 5
      "    shards: 4\n"                                               // 6
      "    table: \"msg_{shard:02}\"\n"                               // 7
      "    backends: {db0: \"0-1\", db9: \"2-3\"}\n"                  // 8
      "  tg:\n"                                                       // 9
      "    key: peer_id\n"                                            // 10
      "    method: bucket\n"                                          // 11
      "    buckets: 8\n"                                              // 12
      "    table: \"tg_{shard}\"\n"                                   // 13
      "    scatter: aggregates\n"                                     // 14
      "    month: {column: m, time_column: t, max_span_months: 6}\n"  // 15
      "    shards:\n"                                                 // 16
      "      s1: {buckets: \"4-7\", backend: db1}\n"                  // 17
      "      s0: {buckets: \"0-3\", backend: db0}\n"                  // 18
      "    hot_keys: {42: s1}\n";                                     // 19
  ConfigIssues issues;
  ShardMapFile f = readShardMapText(yaml, issues);
  EXPECT_TRUE(issues.empty());  // db9 is not known here: backends are routing's check
  ASSERT_EQ(f.version, 3u);
  ASSERT_EQ(f.tables.size(), 2u);
  const auto& msg = f.tables[0];
  EXPECT_EQ(msg.name.text, "msg");
  EXPECT_EQ(msg.name.line, 3);
  ASSERT_TRUE(msg.key);
  EXPECT_EQ(msg.key->line, 4);
  EXPECT_EQ(msg.method, ShardMapMethod::kMod);
  EXPECT_EQ(msg.shards, 4u);
  EXPECT_EQ(msg.table->text, "msg_{shard:02}");
  EXPECT_TRUE(msg.backends_present);
  EXPECT_EQ(msg.backends_line, 8);
  ASSERT_EQ(msg.backends.size(), 2u);
  EXPECT_EQ(msg.backends[1].key.text, "db9");
  EXPECT_EQ(msg.backends[1].value->text, "2-3");
  const auto& tg = f.tables[1];
  EXPECT_EQ(tg.method, ShardMapMethod::kBucket);
  EXPECT_EQ(tg.buckets, 8u);
  EXPECT_EQ(tg.scatter, "aggregates");
  ASSERT_TRUE(tg.month);
  EXPECT_EQ(tg.month->column->text, "m");
  EXPECT_EQ(tg.month->max_span_months, 6u);
  EXPECT_TRUE(tg.month->complete);
  ASSERT_EQ(tg.bucket_shards.size(), 2u);
  EXPECT_EQ(tg.bucket_shards[0].name.text, "s1");  // file order; the compiler sorts
  EXPECT_EQ(tg.bucket_shards[0].name.line, 17);
  EXPECT_EQ(tg.bucket_shards[1].backend->text, "db0");
  EXPECT_EQ(tg.shards_key_line, 16);
  ASSERT_EQ(tg.hot_keys.size(), 1u);
  EXPECT_EQ(tg.hot_keys[0].key.text, "42");
  EXPECT_EQ(tg.hot_keys[0].value->line, 19);
}

TEST(ShardMapFile, ReportsShapeProblemsLikeTheConfig) {
  const char* yaml =
      "version: \"1\"\n"
      "tables:\n"
      "  msg: {key: [a], method: modulo, shards: 9999, tabel: x}\n"
      "  tg: 5\n";
  ConfigIssues issues;
  ShardMapFile f = readShardMapText(yaml, issues);
  auto has = [&](std::string path, std::string text) {
    for (const auto& i : issues) {
      if (i.path == path && i.message.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("version", "must be an integer in [1, 18446744073709551615], got a quoted string"));
  EXPECT_TRUE(has("tables.msg.key", "must be a string, got a list"));
  EXPECT_TRUE(has("tables.msg.method", "'modulo' is not one of: mod, bucket (did you mean 'mod'?)"));
  EXPECT_TRUE(has("tables.msg.tabel", "unknown key 'tabel' (did you mean 'table'?)"));
  EXPECT_TRUE(has("tables.msg.table", "missing required key 'table'"));
  EXPECT_TRUE(has("tables.tg", "must be a mapping (key: value), got '5'"));
  EXPECT_FALSE(f.version);
  ASSERT_EQ(f.tables.size(), 2u);
  EXPECT_TRUE(f.tables[0].readable);
  EXPECT_FALSE(f.tables[0].method);  // invalid: nothing further is read for it
  EXPECT_FALSE(f.tables[1].readable);
}

TEST(ShardMapFile, SyntaxErrorAndMissingFile) {
  ConfigIssues issues;
  readShardMapText("version: 1\ntables: {msg: [\n", issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("YAML syntax error"), std::string::npos);
  issues.clear();
  std::string text;
  readShardMapFile("/nonexistent/shard_map.yaml", text, issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].message, "cannot open shard map file '/nonexistent/shard_map.yaml'");
}

}  // namespace
}  // namespace sp::conf
