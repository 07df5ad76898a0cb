// What MOVE BUCKET / KEY / SHARD mean against a map: the source and target,
// the rows that move (SQL predicate and key predicate agree with the maps
// before and after), the map after the move, and every refusal's code.
#include <gtest/gtest.h>

#include "routing/map/move_plan.hpp"

namespace sp::routing {
namespace {

const std::vector<std::string> kThreeBackends = {"db0", "db1", "db2"};

constexpr std::string_view kMap = R"(
version: 7
tables:
  msg:
    key: conv_id
    method: mod
    shards: 16
    table: "msg_{shard:02}"
    backends: {db0: "0-7", db1: "8-15"}
    scatter: aggregates
  tg_channel_message:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "tg_channel_message_{shard}"
    shards:
      s00: {buckets: "0-15", backend: db0}
      s01: {buckets: "16-31", backend: db0}
      s02: {buckets: "32-47", backend: db1}
      s03: {buckets: "48-63", backend: db1}
    hot_keys: {1001: s02}
    month: {column: message_month, time_column: message_time, max_span_months: 12}
)";

std::shared_ptr<const CompiledShardMap> compiled(std::string_view text) {
  auto m = compileShardMap(text, kThreeBackends);
  EXPECT_TRUE(m.has_value()) << (m ? "" : formatShardMapIssues(m.error(), "map"));
  return m ? *m : nullptr;
}

MovePlan planned(const CompiledShardMap& map, MoveRequest request) {
  auto p = planMove(map, request, kThreeBackends);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p.value_or(MovePlan{});
}

MoveRefusal refused(const CompiledShardMap& map, MoveRequest request) {
  auto p = planMove(map, request, kThreeBackends);
  EXPECT_FALSE(p.has_value());
  return p ? MoveRefusal{} : p.error();
}

// A key whose bucket is `bucket` (and that is not a hot key).
uint64_t keyInBucket(const TableRule& t, uint32_t bucket) {
  for (uint64_t k = 1;; ++k) {
    if (t.bucketOf(k) == bucket && k != 1001) return k;
  }
}

// The moving keys are exactly those whose shard changes between the maps.
void expectKeysMatchMaps(const CompiledShardMap& before, const CompiledShardMap& after, const MovePlan& plan) {
  const TableRule* b = before.findTable(plan.request.table);
  const TableRule* a = after.findTable(plan.request.table);
  ASSERT_TRUE(a && b);
  for (uint64_t k = 0; k < 5000; ++k) {
    const Shard& from = b->shardOf(k);
    const Shard& to = a->shardOf(k);
    bool moves = from.backend != to.backend || from.physical_table != to.physical_table;
    ASSERT_EQ(plan.keys.contains(k), moves) << "key " << k;
    if (moves) {
      EXPECT_EQ(from.physical_table, plan.source_table);
      EXPECT_EQ(to.physical_table, plan.target_table);
      EXPECT_EQ(to.backend, plan.target_backend);
    }
  }
}

TEST(MovePlan, RenderedMapMeansTheSame) {
  auto map = compiled(kMap);
  auto again = compiled(renderShardMapYaml(map->tables(), map->version()));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->checksum(), map->checksum()) << again->canonicalText() << "\nvs\n" << map->canonicalText();
}

TEST(MovePlan, BucketsMoveToAnotherShard) {
  auto map = compiled(kMap);
  auto plan = planned(*map, {MoveKind::kBuckets, "TG_CHANNEL_MESSAGE", {18, 17}, 0, 0, "s03"});
  EXPECT_EQ(plan.request.table, "tg_channel_message");
  EXPECT_EQ(plan.source_shard, "s01");
  EXPECT_EQ(plan.source_table, "tg_channel_message_s01");
  EXPECT_EQ(plan.source_backend, "db0");
  EXPECT_EQ(plan.target_table, "tg_channel_message_s03");
  EXPECT_EQ(plan.target_backend, "db1");
  EXPECT_EQ(plan.row_predicate, "CRC32(CONCAT('channel:', `peer_id`)) % 64 IN (17,18) AND `peer_id` NOT IN (1001)");
  EXPECT_EQ(plan.new_version, 8u);
  auto after = compiled(plan.new_map_yaml);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->version(), 8u);
  const TableRule* t = after->findTable("tg_channel_message");
  EXPECT_EQ(t->shardOf(keyInBucket(*t, 17)).name, "s03");
  EXPECT_EQ(t->shardOf(keyInBucket(*t, 16)).name, "s01");
  EXPECT_EQ(t->shardOf(1001).name, "s02");  // hot keys stay
  expectKeysMatchMaps(*map, *after, plan);
  // msg untouched
  EXPECT_EQ(after->findTable("msg")->shardOf(5).backend, "db0");
}

TEST(MovePlan, HotKeysPinnedToTheSourceStay) {
  std::string text(kMap);
  // 1001's bucket, pinned to the shard that owns that bucket's neighbours.
  auto probe = compiled(kMap);
  uint32_t bucket = probe->findTable("tg_channel_message")->bucketOf(1001);
  std::string owner = probe->findTable("tg_channel_message")->shards[probe->findTable("tg_channel_message")->bucket_to_shard[bucket]].name;
  text.replace(text.find("{1001: s02}"), 11, "{1001: " + owner + "}");
  auto map = compiled(text);
  std::string target = owner == "s03" ? "s00" : "s03";
  auto plan = planned(*map, {MoveKind::kBuckets, "tg_channel_message", {bucket}, 0, 0, target});
  EXPECT_NE(plan.row_predicate.find("`peer_id` NOT IN (1001)"), std::string::npos) << plan.row_predicate;
  EXPECT_FALSE(plan.keys.contains(1001));
  auto after = compiled(plan.new_map_yaml);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->findTable("tg_channel_message")->shardOf(1001).name, owner);
  expectKeysMatchMaps(*map, *after, plan);
}

TEST(MovePlan, HotKeysOfTheTargetAreNotTheBucketsRows) {
  auto probe = compiled(kMap);
  uint64_t pinned = keyInBucket(*probe->findTable("tg_channel_message"), 17);
  std::string text(kMap);
  text.replace(text.find("{1001: s02}"), 11, "{1001: s02, " + std::to_string(pinned) + ": s03}");
  auto map = compiled(text);
  auto plan = planned(*map, {MoveKind::kBuckets, "tg_channel_message", {17}, 0, 0, "s03"});
  // Its rows live on s03 already: clearing the target before the copy must not touch them.
  EXPECT_FALSE(plan.keys.contains(pinned));
  EXPECT_NE(plan.row_predicate.find(std::to_string(pinned)), std::string::npos) << plan.row_predicate;
  auto after = compiled(plan.new_map_yaml);
  ASSERT_TRUE(after);
  expectKeysMatchMaps(*map, *after, plan);
}

TEST(MovePlan, KeyIsPinnedAndUnpinned) {
  auto map = compiled(kMap);
  const TableRule* t = map->findTable("tg_channel_message");
  uint64_t key = keyInBucket(*t, 20);  // on s01
  auto plan = planned(*map, {MoveKind::kKey, "tg_channel_message", {}, key, 0, "s03"});
  EXPECT_EQ(plan.source_table, "tg_channel_message_s01");
  EXPECT_EQ(plan.row_predicate, "`peer_id` = " + std::to_string(key));
  auto after = compiled(plan.new_map_yaml);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->findTable("tg_channel_message")->shardOf(key).name, "s03");
  expectKeysMatchMaps(*map, *after, plan);
  // Moving it back to its bucket's shard removes the pin.
  auto back = planned(*after, {MoveKind::kKey, "tg_channel_message", {}, key, 0, "s01"});
  auto restored = compiled(back.new_map_yaml);
  ASSERT_TRUE(restored);
  EXPECT_EQ(restored->findTable("tg_channel_message")->hot_keys.size(), 1u);  // only 1001
  EXPECT_EQ(restored->findTable("tg_channel_message")->shardOf(key).name, "s01");
}

TEST(MovePlan, ShardMovesToAnotherBackend) {
  auto map = compiled(kMap);
  auto plan = planned(*map, {MoveKind::kShard, "msg", {}, 0, 5, "db1"});
  EXPECT_EQ(plan.source_backend, "db0");
  EXPECT_EQ(plan.target_backend, "db1");
  EXPECT_EQ(plan.source_table, "msg_05");
  EXPECT_EQ(plan.target_table, "msg_05");
  EXPECT_TRUE(plan.row_predicate.empty());
  auto after = compiled(plan.new_map_yaml);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->findTable("msg")->shardOf(21).backend, "db1");
  EXPECT_EQ(after->findTable("msg")->shardOf(20).backend, "db0");
  expectKeysMatchMaps(*map, *after, plan);
}

TEST(MovePlan, RefusalsCarryTheirCodes) {
  auto map = compiled(kMap);
  EXPECT_EQ(refused(*map, {MoveKind::kBuckets, "nope", {1}, 0, 0, "s01"}).code, move_error::kInvalid);
  EXPECT_EQ(refused(*map, {MoveKind::kBuckets, "msg", {1}, 0, 0, "s01"}).code, move_error::kInvalid);
  EXPECT_EQ(refused(*map, {MoveKind::kShard, "tg_channel_message", {}, 0, 1, "db1"}).code, move_error::kInvalid);
  EXPECT_EQ(refused(*map, {MoveKind::kBuckets, "tg_channel_message", {64}, 0, 0, "s01"}).code, move_error::kInvalid);
  EXPECT_EQ(refused(*map, {MoveKind::kBuckets, "tg_channel_message", {1}, 0, 0, "s09"}).code, move_error::kInvalid);
  auto mixed = refused(*map, {MoveKind::kBuckets, "tg_channel_message", {1, 17}, 0, 0, "s03"});
  EXPECT_EQ(mixed.code, move_error::kInvalid);
  EXPECT_NE(mixed.message.find("different shards"), std::string::npos);
  auto there = refused(*map, {MoveKind::kBuckets, "tg_channel_message", {50}, 0, 0, "s03"});
  EXPECT_EQ(there.code, move_error::kAlreadyThere);
  EXPECT_EQ(refused(*map, {MoveKind::kKey, "tg_channel_message", {}, 1001, 0, "s02"}).code,
            move_error::kAlreadyThere);
  EXPECT_EQ(refused(*map, {MoveKind::kShard, "msg", {}, 0, 9, "db1"}).code, move_error::kAlreadyThere);
  EXPECT_EQ(refused(*map, {MoveKind::kShard, "msg", {}, 0, 16, "db1"}).code, move_error::kInvalid);
  EXPECT_EQ(refused(*map, {MoveKind::kShard, "msg", {}, 0, 3, "db7"}).code, move_error::kInvalid);
}

}  // namespace
}  // namespace sp::routing
