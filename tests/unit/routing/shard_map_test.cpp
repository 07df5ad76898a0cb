// Shard map: compiled lookups on the shipped map shape, and one case per kind
// of invalid map (each must name the key path and line).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "routing/map/shard_map.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


// Line numbers in the validation cases below count from this text's line 1.
constexpr const char* kGoodMap = R"(version: 3
tables:
  msg:
    key: conv_id
    method: mod
    shards: 16
    table: "msg_{shard:02}"
    backends: {db0: "0-7", db1: "8-15"}
    scatter: aggregates
  user_read_cursor: {key: uid, method: mod, shards: 16, table: "user_read_cursor_{shard:02}", backends: {db0: "0-7", db1: "8-15"}}
  tg_channel_message:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "tg_channel_message_{shard}"
    shards:
      s00: {buckets: "0-15",  backend: db0}
      s01: {buckets: "16-31", backend: db0}
      s02: {buckets: "32-47", backend: db1}
      s03: {buckets: "48-63", backend: db1}
    hot_keys: {777: s01}
    month: {column: message_month, time_column: message_time, max_span_months: 12}
    scatter: aggregates
)";

std::shared_ptr<const CompiledShardMap> compileGood() {
  auto result = compileShardMap(kGoodMap, kBackends);
  EXPECT_TRUE(result.has_value()) << (result ? "" : formatShardMapIssues(result.error(), "good"));
  return result ? *result : nullptr;
}

TEST(ShardMap, CompilesTheContractExample) {
  auto map = compileGood();
  ASSERT_TRUE(map);
  EXPECT_EQ(map->version(), 3u);
  ASSERT_EQ(map->tables().size(), 3u);
  EXPECT_EQ(map->tables()[0].name, "msg");  // sorted by name
  EXPECT_EQ(map->referencedBackends(), kBackends);
  EXPECT_EQ(map->sourceText(), kGoodMap);
  EXPECT_EQ(map->checksum().size(), 64u);
}

TEST(ShardMap, ModTableEveryResidue) {
  auto map = compileGood();
  ASSERT_TRUE(map);
  const TableRule* msg = map->findTable("msg");
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->key, "conv_id");
  EXPECT_EQ(msg->method, ShardMethod::kMod);
  EXPECT_EQ(msg->scatter, ScatterPolicy::kAggregates);
  ASSERT_EQ(msg->shards.size(), 16u);
  const char* names[] = {"msg_00", "msg_01", "msg_02", "msg_03", "msg_04", "msg_05", "msg_06", "msg_07",
                         "msg_08", "msg_09", "msg_10", "msg_11", "msg_12", "msg_13", "msg_14", "msg_15"};
  for (uint64_t base : {0ull, 16ull, 88000ull, 1ull << 40}) {
    for (uint64_t r = 0; r < 16; ++r) {
      const Shard& s = msg->shardOf(base + r);
      EXPECT_EQ(s.index, r);
      EXPECT_EQ(s.physical_table, names[r]);
      EXPECT_EQ(s.backend, r < 8 ? "db0" : "db1");
    }
  }
  EXPECT_EQ(msg->shardOf(88001).physical_table, "msg_01");  // the seeds' EXPLAIN uses msg_07 by hand
  EXPECT_EQ(msg->shardOf(18446744073709551615ull).physical_table, "msg_15");
  EXPECT_EQ(msg->shardOf(18446744073709551615ull).backend, "db1");
  EXPECT_EQ(msg->shardOf(9223372036854775808ull).physical_table, "msg_00");
  EXPECT_EQ(msg->shards[7].name, "07");
}

struct BucketCase {
  uint64_t peer_id;
  uint32_t crc;  // zlib.crc32(b"channel:%d" % peer_id)
  uint32_t bucket;
  const char* shard;
};

TEST(ShardMap, BucketTableMatchesPythonZlib) {
  // Generated with /usr/bin/python3: zlib.crc32(("channel:%d" % p).encode()) % 64.
  const BucketCase cases[] = {
      {0ull, 0xf7912936u, 54u, "s03"},
      {1ull, 0x809619a0u, 32u, "s02"},
      {7ull, 0x69f5bc95u, 21u, "s01"},
      {42ull, 0xb1f47fb9u, 57u, "s03"},
      {1001ull, 0x0ea6c8c2u, 2u, "s00"},
      {88001ull, 0x2707913cu, 60u, "s03"},
      {123456789ull, 0x53475d2du, 45u, "s02"},
      {1234567890123ull, 0xdd008ef1u, 49u, "s03"},
      {9223372036854775807ull, 0x3fdbc89eu, 30u, "s01"},
      {18446744073709551615ull, 0xc95f2148u, 8u, "s00"},
      {1000000000001ull, 0xd4d42dd6u, 22u, "s01"},
      {2147483648ull, 0x122571adu, 45u, "s02"},
  };
  auto map = compileGood();
  ASSERT_TRUE(map);
  const TableRule* tg = map->findTable("tg_channel_message");
  ASSERT_NE(tg, nullptr);
  for (const auto& c : cases) {
    EXPECT_EQ(c.crc % 64, c.bucket);
    EXPECT_EQ(tg->bucketOf(c.peer_id), c.bucket) << c.peer_id;
    const Shard& s = tg->shardOf(c.peer_id);
    EXPECT_EQ(s.name, c.shard) << c.peer_id;
    EXPECT_EQ(s.physical_table, std::string("tg_channel_message_") + c.shard);
    EXPECT_EQ(s.backend, c.bucket < 32 ? "db0" : "db1");
  }
}

TEST(ShardMap, HotKeyOverridesBucket) {
  auto map = compileGood();
  ASSERT_TRUE(map);
  const TableRule* tg = map->findTable("tg_channel_message");
  ASSERT_NE(tg, nullptr);
  EXPECT_EQ(tg->shardOf(777).name, "s01");
  EXPECT_EQ(tg->bucketOf(777), tg->bucketOf(777));  // bucket itself is unchanged by hot keys
  ASSERT_EQ(tg->hot_keys.size(), 1u);
  ASSERT_TRUE(tg->month.has_value());
  EXPECT_EQ(tg->month->column, "message_month");
  EXPECT_EQ(tg->month->time_column, "message_time");
  EXPECT_EQ(tg->month->max_span_months, 12u);
  ASSERT_EQ(tg->shards[2].buckets.size(), 1u);
  EXPECT_EQ(tg->shards[2].buckets[0].first, 32u);
  EXPECT_EQ(tg->shards[2].buckets[0].last, 47u);
}

TEST(ShardMap, LogicalLookupIsCaseInsensitive) {
  auto map = compileGood();
  ASSERT_TRUE(map);
  EXPECT_EQ(map->findTable("msg"), map->findTable("MSG"));
  EXPECT_EQ(map->findTable("Tg_Channel_Message"), map->findTable("tg_channel_message"));
  EXPECT_NE(map->findTable("msg"), nullptr);
  EXPECT_EQ(map->findTable("conv"), nullptr);
  EXPECT_EQ(map->findTable("msg_"), nullptr);
  EXPECT_EQ(map->findTable(""), nullptr);
}

TEST(ShardMap, PhysicalLookup) {
  auto map = compileGood();
  ASSERT_TRUE(map);
  auto ref = map->findPhysical("msg_07");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->table->name, "msg");
  EXPECT_EQ(ref->shard->index, 7u);
  EXPECT_EQ(ref->shard->backend, "db0");
  ref = map->findPhysical("TG_CHANNEL_MESSAGE_S02");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->table->name, "tg_channel_message");
  EXPECT_EQ(ref->shard->name, "s02");
  EXPECT_EQ(ref->shard->backend, "db1");
  ref = map->findPhysical("user_read_cursor_15");
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->shard->backend, "db1");
  EXPECT_FALSE(map->findPhysical("msg_16"));
  EXPECT_FALSE(map->findPhysical("msg_7"));
  EXPECT_FALSE(map->findPhysical("msg"));
}

TEST(ShardMap, ChecksumIgnoresCommentsAndKeyOrderButNotContent) {
  auto a = compileShardMap("version: 1\ntables:\n  t: {key: k, method: mod, shards: 2, table: \"t_{shard}\", backends: {db0: \"0-1\"}}\n", kBackends);
  auto b = compileShardMap("# comment\nversion: 1\ntables:\n  t:\n    table: t_{shard}\n    method: mod\n    key: k\n    backends: {db0: \"0,1\"}\n    shards: 2\n", kBackends);
  auto c = compileShardMap("version: 1\ntables:\n  t: {key: k, method: mod, shards: 2, table: \"t_{shard}\", backends: {db1: \"0-1\"}}\n", kBackends);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ((*a)->checksum(), (*b)->checksum());
  EXPECT_NE((*a)->sourceText(), (*b)->sourceText());
  EXPECT_NE((*a)->checksum(), (*c)->checksum());
}

TEST(ShardMap, ShippedConfigMapCompiles) {
  auto result = loadShardMap(std::string(SP_SOURCE_DIR) + "/conf/shard_map.yaml", kBackends);
  ASSERT_TRUE(result) << formatShardMapIssues(result.error(), "conf/shard_map.yaml");
  const TableRule* msg = (*result)->findTable("msg");
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->shardOf(18446744073709551615ull).physical_table, "msg_15");
  EXPECT_NE((*result)->findTable("tg_channel_message"), nullptr);
}

TEST(ShardMap, MissingFileIsAnIssue) {
  auto result = loadShardMap("/nonexistent/shard_map.yaml", kBackends);
  ASSERT_FALSE(result);
  ASSERT_EQ(result.error().size(), 1u);
  EXPECT_NE(result.error()[0].message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace sp::routing

namespace sp::routing {
namespace {

// scripts/schema reads the shard map on its own (Python); its physical table
// layout must be exactly what the C++ compiler computes.
TEST(ShardMap, SchemaToolPlanAgreesWithCompiler) {
  std::string source = SP_SOURCE_DIR;
  std::string command = "/usr/bin/python3 " + source + "/scripts/schema plan --config " + source +
                        "/conf/shardproxy.yaml 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << output;

  auto map = loadShardMap(source + "/conf/shard_map.yaml", kBackends);
  ASSERT_TRUE(map);
  std::set<std::string> expected;
  for (const auto& t : (*map)->tables()) {
    for (const auto& s : t.shards) expected.insert(t.name + "\t" + s.name + "\t" + s.physical_table + "\t" + s.backend);
  }
  std::set<std::string> from_tool;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    std::string line = output.substr(start, end - start);
    start = end == std::string::npos ? output.size() : end + 1;
    // logical, shard, physical, backend, address: keep the first four of sharded tables.
    size_t cut = line.rfind('\t');
    if (line.find("\t\t") != std::string::npos || cut == std::string::npos) continue;
    from_tool.insert(line.substr(0, cut));
  }
  EXPECT_EQ(from_tool, expected);
  EXPECT_FALSE(expected.empty());
}

}  // namespace
}  // namespace sp::routing
