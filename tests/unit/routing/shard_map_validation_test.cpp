// One case per kind of invalid shard map: the compiler must refuse it and name
// the key path, the line and the problem.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/map/shard_map.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


struct BadMapCase {
  const char* name;
  const char* yaml;
  const char* path;     // expected issue path
  int line;             // expected 1-based line
  const char* message;  // expected substring of the message
};

// Prefixes: a valid mod table and bucket table that cases below modify.
#define MOD_TABLE(backends) \
  "  msg: {key: conv_id, method: mod, shards: 16, table: \"msg_{shard:02}\", backends: " backends "}\n"
#define TG_HEAD                                                                               \
  "  tg:\n"                                                                                   \
  "    key: peer_id\n"                                                                        \
  "    method: bucket\n"                                                                      \
  "    key_prefix: \"channel:\"\n"                                                            \
  "    buckets: 64\n"                                                                         \
  "    table: \"tg_{shard}\"\n"

const BadMapCase kCases[] = {
    {"OverlappingBuckets",
     "version: 1\ntables:\n" TG_HEAD
     "    shards:\n      s00: {buckets: \"0-15\", backend: db0}\n      s01: {buckets: \"10-31\", backend: db0}\n"
     "      s02: {buckets: \"32-63\", backend: db1}\n",
     "tables.tg.shards.s01.buckets", 11, "buckets 10-15 are also mapped to 's00'"},
    {"MissingBuckets",
     "version: 1\ntables:\n" TG_HEAD
     "    shards:\n      s00: {buckets: \"0-15\", backend: db0}\n      s01: {buckets: \"16-31,33-62\", backend: db1}\n",
     "tables.tg.shards", 9, "buckets 32,63 are not mapped to any shard"},
    {"BucketOutOfRange",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-64\", backend: db0}\n",
     "tables.tg.shards.s00.buckets", 10, "'0-64' is outside 0-63"},
    {"ReversedRange",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"63-0\", backend: db0}\n",
     "tables.tg.shards.s00.buckets", 10, "is reversed"},
    {"UnknownBackendInBucketShard",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\", backend: db9}\n",
     "tables.tg.shards.s00.backend", 10, "unknown backend 'db9' (backends in the proxy config: db0, db1)"},
    {"ShardWithoutBackend",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\"}\n",
     "tables.tg.shards.s00.backend", 10, "missing required key 'backend'"},
    {"UnknownBackendInModTable", "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-7\", dbx: \"8-15\"}"),
     "tables.msg.backends.dbx", 3, "unknown backend 'dbx'"},
    {"ModShardPlacedTwice", "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-7\", db1: \"7-15\"}"),
     "tables.msg.backends.db1", 3, "shards 7 are also mapped to 'db0'"},
    {"ModShardMissing", "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-7\", db1: \"8-13,15\"}"),
     "tables.msg.backends", 3, "shards 14 are not mapped to any backend"},
    {"ModShardOutOfRange", "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-7\", db1: \"8-16\"}"),
     "tables.msg.backends.db1", 3, "'8-16' is outside 0-15"},
    {"UnknownKeyTypo",
     "version: 1\ntables:\n  msg:\n    key: conv_id\n    method: mod\n    shard: 16\n",
     "tables.msg.shard", 6, "unknown key 'shard' (did you mean 'shards'?)"},
    {"UnknownTopLevelKey", "version: 1\ntabels: {}\ntables: {}\n", "tabels", 2,
     "unknown key 'tabels' (did you mean 'tables'?)"},
    {"UnknownMonthKey",
     "version: 1\ntables:\n  t:\n    key: k\n    method: mod\n    shards: 1\n    table: \"t_{shard}\"\n"
     "    backends: {db0: \"0\"}\n    month: {column: m, max_span: 3}\n",
     "tables.t.month.max_span", 9, "unknown key 'max_span' (did you mean 'max_span_months'?)"},
    {"UnknownBucketShardKey",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {bucket: \"0-63\", backend: db0}\n",
     "tables.tg.shards.s00.bucket", 10, "unknown key 'bucket' (did you mean 'buckets'?)"},
    {"QuotedIntegerIsWrongType",
     "version: 1\ntables:\n  msg: {key: conv_id, method: mod, shards: \"16\", table: \"m_{shard}\", backends: {db0: \"0-15\"}}\n",
     "tables.msg.shards", 3, "must be an integer in [1, 4096], got a quoted string"},
    {"ListWhereMappingExpected",
     "version: 1\ntables:\n  msg:\n    key: conv_id\n    method: mod\n    shards: 2\n    table: \"m_{shard}\"\n    backends: [db0, db1]\n",
     "tables.msg.backends", 8, "must be a mapping (key: value), got a list"},
    {"MappingWhereStringExpected",
     "version: 1\ntables:\n  msg:\n    key: {a: 1}\n    method: mod\n    shards: 1\n    table: \"m_{shard}\"\n    backends: {db0: \"0\"}\n",
     "tables.msg.key", 4, "must be a string, got a mapping"},
    {"TablesIsAList", "version: 1\ntables:\n  - msg\n", "tables", 3, "must be a mapping (key: value), got a list"},
    {"BadMethod", "version: 1\ntables:\n  msg: {key: conv_id, method: modulo, shards: 16}\n", "tables.msg.method", 3,
     "'modulo' is not one of: mod, bucket"},
    {"BadScatter",
     "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 1, table: \"m_{shard}\", backends: {db0: \"0\"}, scatter: always}\n",
     "tables.msg.scatter", 3, "'always' is not one of: deny, aggregates, allow"},
    {"TemplateBadPlaceholder", "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 1, table: \"msg_{shards}\", backends: {db0: \"0\"}}\n",
     "tables.msg.table", 3, "placeholder '{shards}' is not {shard} or {shard:0N}"},
    {"TemplateWithoutPlaceholder", "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 2, table: msg, backends: {db0: \"0-1\"}}\n",
     "tables.msg.table", 3, "has no {shard} placeholder"},
    {"TemplateTwoPlaceholders", "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 2, table: \"m{shard}_{shard}\", backends: {db0: \"0-1\"}}\n",
     "tables.msg.table", 3, "exactly one {shard} placeholder"},
    {"TemplateInvalidIdentifier", "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 2, table: \"msg-{shard}\", backends: {db0: \"0-1\"}}\n",
     "tables.msg.table", 3, "physical name 'msg-0' (table msg shard 0) is not a plain SQL identifier"},
    {"PaddedTemplateOnBucketTable",
     "version: 1\ntables:\n  tg:\n    key: peer_id\n    method: bucket\n    buckets: 1\n    table: \"tg_{shard:02}\"\n"
     "    shards: {s0: {buckets: \"0\", backend: db0}}\n",
     "tables.tg.table", 0, "use {shard}, not {shard:0N}"},
    {"DuplicatePhysicalNamesAcrossTables",
     "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-15\"}")
     "  msg2: {key: conv_id, method: mod, shards: 2, table: \"msg_{shard:02}\", backends: {db1: \"0-1\"}}\n",
     "tables.msg2.table", 4, "physical name 'msg_00' of table msg2 shard 00 is also produced by table msg shard 00"},
    {"DuplicatePhysicalNamesIgnoringCase",
     "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-15\"}")
     "  other: {key: conv_id, method: mod, shards: 2, table: \"MSG_{shard:02}\", backends: {db1: \"0-1\"}}\n",
     "tables.other.table", 4, "is also produced by table msg shard 00"},
    {"PhysicalNameEqualsLogicalName",
     "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-15\"}")
     "  msg_03: {key: conv_id, method: mod, shards: 1, table: \"x_{shard}\", backends: {db1: \"0\"}}\n",
     "tables.msg.table", 3, "physical name 'msg_03' (table msg shard 03) is also a logical table name (msg_03)"},
    {"TableNamesDifferOnlyInCase",
     "version: 1\ntables:\n" MOD_TABLE("{db0: \"0-15\"}")
     "  MSG: {key: conv_id, method: mod, shards: 1, table: \"y_{shard}\", backends: {db1: \"0\"}}\n",
     "tables.MSG", 4, "table 'MSG' differs from table 'msg' only in letter case"},
    {"HotKeyToMissingShard",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\", backend: db0}\n    hot_keys: {12345: s09}\n",
     "tables.tg.hot_keys.12345", 11, "points at shard 's09', which is not a shard of table tg (shards: s00)"},
    {"NegativeHotKey",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\", backend: db0}\n    hot_keys: {-1001234567890: s00}\n",
     "tables.tg.hot_keys.-1001234567890", 11, "is negative: use the canonical (positive) peer id"},
    {"HotKeyNotANumber",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\", backend: db0}\n    hot_keys: {abc: s00}\n",
     "tables.tg.hot_keys.abc", 11, "not an unsigned 64-bit integer"},
    {"HotKeysOnModTable",
     "version: 1\ntables:\n" "  msg: {key: conv_id, method: mod, shards: 1, table: \"m_{shard}\", backends: {db0: \"0\"}, hot_keys: {}}\n",
     "tables.msg.hot_keys", 3, "'hot_keys' is only valid for method: bucket"},
    {"BackendsOnBucketTable",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      s00: {buckets: \"0-63\", backend: db0}\n    backends: {db0: \"0\"}\n",
     "tables.tg.backends", 11, "'backends' is only valid for method: mod"},
    {"VersionZero", "version: 0\ntables: {}\n", "version", 1, "0 is out of range [1, 18446744073709551615]"},
    {"VersionNegative", "version: -2\ntables: {}\n", "version", 1, "must be an integer in [1, 18446744073709551615], got '-2'"},
    {"VersionMissing", "tables: {}\n", "version", 1, "missing required key 'version'"},
    {"VersionString", "version: one\ntables: {}\n", "version", 1, "must be an integer in [1, 18446744073709551615], got 'one'"},
    {"MissingTableKey", "version: 1\ntables:\n  msg: {method: mod, shards: 1, table: \"m_{shard}\", backends: {db0: \"0\"}}\n",
     "tables.msg.key", 3, "missing required key 'key'"},
    {"MissingBucketsCount",
     "version: 1\ntables:\n  tg: {key: k, method: bucket, table: \"tg_{shard}\", shards: {s0: {buckets: \"0\", backend: db0}}}\n",
     "tables.tg.buckets", 0, "missing required key 'buckets'"},
    {"ZeroShards", "version: 1\ntables:\n  msg: {key: conv_id, method: mod, shards: 0, table: \"m_{shard}\", backends: {db0: \"0\"}}\n",
     "tables.msg.shards", 3, "0 is out of range [1, 4096]"},
    {"MaxSpanZero",
     "version: 1\ntables:\n  t: {key: k, method: mod, shards: 1, table: \"t_{shard}\", backends: {db0: \"0\"}, month: {column: m, max_span_months: 0}}\n",
     "tables.t.month.max_span_months", 3, "0 is out of range [1, 1200]"},
    {"MonthWithoutColumn",
     "version: 1\ntables:\n  t: {key: k, method: mod, shards: 1, table: \"t_{shard}\", backends: {db0: \"0\"}, month: {time_column: t}}\n",
     "tables.t.month.column", 3, "missing required key 'column'"},
    {"KeyNotAnIdentifier",
     "version: 1\ntables:\n  t: {key: \"conv id\", method: mod, shards: 1, table: \"t_{shard}\", backends: {db0: \"0\"}}\n",
     "tables.t.key", 3, "'conv id' is not a plain SQL identifier"},
    {"DuplicateYamlKey", "version: 1\nversion: 2\ntables: {}\n", "version", 2, "duplicate key 'version'"},
    {"YamlSyntaxError", "version: 1\ntables: {msg: [\n", "", 3, "YAML syntax error"},
    {"EmptyDocument", "", "", 0, "the shard map is empty"},
    {"ArchiveOnMonthTable",
     "version: 1\ntables:\n  t:\n    key: k\n    method: mod\n    shards: 1\n    table: \"t_{shard}\"\n"
     "    backends: {db0: \"0\"}\n    month: {column: m}\n    archive: {table: \"ta_{shard}\"}\n",
     "tables.t.archive", 10, "a month-partitioned table is archived by dropping month partitions"},
    {"ArchiveTimeColumnNotAnIdentifier",
     "version: 1\ntables:\n  t: {key: k, method: mod, shards: 1, table: \"t_{shard}\", backends: {db0: \"0\"}, "
     "archive: {table: \"ta_{shard}\", time_column: \"a b\"}}\n",
     "tables.t.archive.time_column", 3, "'a b' is not a plain SQL identifier"},
    {"BadShardName",
     "version: 1\ntables:\n" TG_HEAD "    shards:\n      \"s 0\": {buckets: \"0-63\", backend: db0}\n",
     "tables.tg.shards.s 0", 10, "shard name 's 0' must be 1-32 letters, digits or _"},
};

class BadShardMap : public ::testing::TestWithParam<BadMapCase> {};

TEST_P(BadShardMap, IsRefusedWithPathLineAndMessage) {
  const BadMapCase& c = GetParam();
  auto result = compileShardMap(c.yaml, kBackends);
  ASSERT_FALSE(result.has_value()) << "accepted a bad map";
  const ShardMapIssues& issues = result.error();
  bool found = false;
  for (const auto& issue : issues) {
    if (issue.path == c.path && issue.message.find(c.message) != std::string::npos) {
      found = true;
      if (c.line != 0) {
        EXPECT_EQ(issue.line, c.line) << issue.message;
      }
    }
  }
  EXPECT_TRUE(found) << "expected '" << c.path << "': '" << c.message << "' among:\n"
                     << formatShardMapIssues(issues, "map");
}

INSTANTIATE_TEST_SUITE_P(Cases, BadShardMap, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ShardMapValidation, ReportsEveryProblemAtOnce) {
  const char* yaml =
      "version: 0\n"
      "tables:\n"
      "  msg: {key: conv_id, method: mod, shards: 16, table: \"msg_{shard:02}\", backends: {db0: \"0-7\", db9: \"8-14\"}, sharding: x}\n"
      "  tg:\n"
      "    key: peer_id\n"
      "    method: bucket\n"
      "    buckets: 8\n"
      "    table: \"tg_{shard}\"\n"
      "    shards: {a: {buckets: \"0-4\", backend: db0}, b: {buckets: \"4-6\", backend: db1}}\n"
      "    hot_keys: {5: c}\n";
  auto result = compileShardMap(yaml, kBackends);
  ASSERT_FALSE(result);
  std::string all = formatShardMapIssues(result.error(), "shard_map.yaml");
  const char* expected[] = {
      "shard_map.yaml:1: version: 0 is out of range [1, ",
      "shard_map.yaml:3: tables.msg.sharding: unknown key 'sharding'",
      "shard_map.yaml:3: tables.msg.backends.db9: unknown backend 'db9'",
      "shard_map.yaml:3: tables.msg.backends: shards 15 are not mapped to any backend",
      "shard_map.yaml:9: tables.tg.shards.b.buckets: buckets 4 are also mapped to 'a'",
      "shard_map.yaml:9: tables.tg.shards: buckets 7 are not mapped to any shard",
      "shard_map.yaml:10: tables.tg.hot_keys.5: hot key 5 points at shard 'c'",
  };
  for (const char* line : expected) EXPECT_NE(all.find(line), std::string::npos) << line << "\nin:\n" << all;
  EXPECT_EQ(result.error().size(), std::size(expected)) << all;
}

TEST(ShardMapValidation, EmptyBackendListRejectsEveryReference) {
  auto result = compileShardMap("version: 1\ntables:\n" MOD_TABLE("{db0: \"0-15\"}"), {});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error()[0].message.find("backends in the proxy config: none"), std::string::npos);
}

TEST(ShardMapValidation, NoTablesIsValid) {
  auto result = compileShardMap("version: 7\ntables: {}\n", kBackends);
  ASSERT_TRUE(result);
  EXPECT_TRUE((*result)->tables().empty());
  EXPECT_EQ((*result)->findTable("msg"), nullptr);
}

}  // namespace
}  // namespace sp::routing
