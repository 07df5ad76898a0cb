// The hot-key policy's decisions (proxy/move/hot_key_policy.hpp) on a fake
// clock: sustain, the rate floor, cooldown (refusals included), the choice
// of a target, one move at a time, and the keys it never moves (pinned
// keys, keys of mod tables, keys of a table with a move running).
#include "proxy/move/hot_key_policy.hpp"

#include <gtest/gtest.h>

#include "routing/map/shard_map.hpp"

namespace sp::proxy {
namespace {

using Clock = HotKeyPolicy::Clock;
using std::chrono::seconds;

constexpr std::string_view kMap = R"(
version: 3
tables:
  msg:
    key: conv_id
    method: mod
    shards: 4
    table: "msg_{shard:02}"
    backends: {db0: "0-1", db1: "2-3"}
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
)";
constexpr std::string_view kTable = "tg_channel_message";

class HotKeyPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<std::string> backends = {"db0", "db1"};
    auto compiled = routing::compileShardMap(kMap, backends);
    ASSERT_TRUE(compiled) << routing::formatShardMapIssues(compiled.error(), "map");
    map_ = *compiled;
    rule_ = map_->findTable(kTable);
    settings_.enabled = true;
    settings_.min_shard_share_pct = 50;
    settings_.min_statements_per_second = 100;
    settings_.sustain_seconds = 60;
    settings_.cooldown_seconds = 600;
    policy_.configure(settings_);
  }

  // A key of the channel table on shard `shard` (not the pinned one).
  uint64_t keyOn(std::string_view shard, uint64_t after = 0) const {
    for (uint64_t k = after + 1;; ++k) {
      if (k != 1001 && rule_->shardOf(k).name == shard) return k;
    }
  }

  // The tracker's row of `key`: `rate` statements/s of `shard_rate` on its shard.
  HotKeyRow row(uint64_t key, double rate, double shard_rate, std::string table = std::string(kTable)) const {
    const routing::TableRule* rule = map_->findTable(table);
    return HotKeyRow{table, key, rule->shardOf(key).name, rule->shardOf(key).backend, rate, rate, shard_rate};
  }

  HotKeyPolicyInput input(std::vector<HotKeyRow> keys, std::map<std::string, double> shard_rates = {}) const {
    HotKeyPolicyInput in;
    in.keys = std::move(keys);
    in.shard_rates = std::move(shard_rates);
    in.map = map_.get();
    in.running = running_;
    return in;
  }

  // Checks every second from `from` for `count` seconds; the first decision.
  std::optional<HotKeyMoveDecision> checkEverySecond(Clock::time_point from, int count, const HotKeyPolicyInput& in,
                                                     int* at = nullptr) {
    for (int i = 0; i < count; ++i) {
      if (auto d = policy_.check(from + seconds(i), in)) {
        if (at) *at = i;
        return d;
      }
    }
    return std::nullopt;
  }

  std::shared_ptr<const routing::CompiledShardMap> map_;
  const routing::TableRule* rule_ = nullptr;
  conf::HotKeyAutoMoveConfig settings_;
  HotKeyPolicy policy_;
  std::vector<MoveRecord> running_;
  const Clock::time_point t0_ = Clock::time_point{} + seconds(1000);
};

TEST_F(HotKeyPolicyTest, MovesAKeyOnlyOnceItStayedHotForSustainSeconds) {
  const uint64_t hot = keyOn("s01");
  const auto in = input({row(hot, 400, 600)});
  int at = -1;
  auto d = checkEverySecond(t0_, 120, in, &at);
  ASSERT_TRUE(d);
  EXPECT_EQ(at, 60);  // hot at t0 .. t0+60 s: due at the 61st check
  EXPECT_EQ(d->request.kind, routing::MoveKind::kKey);
  EXPECT_EQ(d->request.table, kTable);
  EXPECT_EQ(d->request.key, hot);
  EXPECT_NE(d->request.target, "s01");
  EXPECT_EQ(d->source_shard, "s01");
  EXPECT_NEAR(d->share, 400.0 / 600, 1e-9);
  EXPECT_DOUBLE_EQ(d->hot_seconds, 60);
}

TEST_F(HotKeyPolicyTest, ADipBelowTheShareStartsTheSustainAgain) {
  const uint64_t hot = keyOn("s01");
  EXPECT_FALSE(checkEverySecond(t0_, 50, input({row(hot, 400, 600)})));
  EXPECT_FALSE(policy_.check(t0_ + seconds(50), input({row(hot, 400, 900)})));  // 44%: below 50%
  int at = -1;
  ASSERT_TRUE(checkEverySecond(t0_ + seconds(51), 120, input({row(hot, 400, 600)}), &at));
  EXPECT_EQ(at, 60);
  // A key that leaves the tracker's top rows is forgotten the same way.
  HotKeyPolicy other;
  other.configure(settings_);
  EXPECT_FALSE(other.check(t0_, input({row(hot, 400, 600)})));
  EXPECT_FALSE(other.check(t0_ + seconds(30), input({})));
  EXPECT_FALSE(other.check(t0_ + seconds(61), input({row(hot, 400, 600)})));
}

TEST_F(HotKeyPolicyTest, AnIdleShardsOnlyKeyIsBelowTheFloor) {
  const uint64_t alone = keyOn("s01");
  // 100% of its shard, but 3 statements/s: not hot.
  EXPECT_FALSE(checkEverySecond(t0_, 300, input({row(alone, 3, 3)})));
  EXPECT_TRUE(policy_.blocked().empty()) << policy_.blocked();
  // At the floor exactly it is.
  EXPECT_TRUE(checkEverySecond(t0_ + seconds(300), 120, input({row(alone, 100, 100)})));
}

TEST_F(HotKeyPolicyTest, CooldownCountsFromEachAttemptRefusalsIncluded) {
  const uint64_t a = keyOn("s01");
  const uint64_t b = keyOn("s00");
  const auto in = input({row(a, 400, 600), row(b, 300, 500)});
  int at = -1;
  auto first = checkEverySecond(t0_, 120, in, &at);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->request.key, a);  // the busier one first
  const auto refused_at = t0_ + seconds(at);
  policy_.refused(refused_at);  // e.g. the coordinator refused: no retry before the cooldown
  EXPECT_FALSE(checkEverySecond(refused_at + seconds(1), 598, in));
  EXPECT_NE(policy_.blocked().find("cooldown_seconds = 600"), std::string::npos) << policy_.blocked();
  auto again = policy_.check(refused_at + seconds(600), in);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->request.key, a);
  // A started move counts the same, once it ended.
  policy_.started(refused_at + seconds(600), 7);
  EXPECT_FALSE(checkEverySecond(refused_at + seconds(601), 599, in));
  EXPECT_TRUE(policy_.check(refused_at + seconds(1200), in));
}

TEST_F(HotKeyPolicyTest, OneMoveOfThePolicyAtATime) {
  settings_.cooldown_seconds = 10;
  policy_.configure(settings_);
  const uint64_t a = keyOn("s01");
  const uint64_t b = keyOn("s00");
  auto d = checkEverySecond(t0_, 120, input({row(a, 400, 600), row(b, 300, 500)}));
  ASSERT_TRUE(d);
  const auto now = t0_ + seconds(60);
  policy_.started(now, 42);
  MoveRecord move;
  move.id = 42;
  move.request = d->request;
  running_ = {move};
  // Long past the cooldown, b of another shard is due, but the policy's move still runs.
  EXPECT_FALSE(checkEverySecond(now + seconds(1), 100, input({row(b, 300, 500)})));
  EXPECT_NE(policy_.blocked().find("move 42 still runs"), std::string::npos) << policy_.blocked();
  EXPECT_EQ(policy_.inFlight(), 42);
  running_.clear();
  auto next = policy_.check(now + seconds(101), input({row(b, 300, 500)}));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->request.key, b);
  EXPECT_FALSE(policy_.inFlight());
}

TEST_F(HotKeyPolicyTest, WaitsWhileAnotherMoveOfTheTableRunsWithoutSpendingItsCooldown) {
  const uint64_t hot = keyOn("s01");
  MoveRecord operators;
  operators.id = 3;
  operators.request.kind = routing::MoveKind::kBuckets;
  operators.request.table = std::string(kTable);
  operators.request.buckets = {40};
  running_ = {operators};
  EXPECT_FALSE(checkEverySecond(t0_, 120, input({row(hot, 400, 600)})));
  EXPECT_NE(policy_.blocked().find("a move of tg_channel_message runs"), std::string::npos) << policy_.blocked();
  running_.clear();
  EXPECT_TRUE(policy_.check(t0_ + seconds(120), input({row(hot, 400, 600)})));
}

TEST_F(HotKeyPolicyTest, ThePinnedKeyIsNeverMovedAgain) {
  // 1001 is pinned to s02 by the map: a shard of its own already.
  const HotKeyRow pinned{std::string(kTable), 1001, "s02", "db1", 900, 900, 950};
  EXPECT_FALSE(checkEverySecond(t0_, 300, input({pinned})));
  EXPECT_TRUE(policy_.blocked().empty()) << policy_.blocked();
}

TEST_F(HotKeyPolicyTest, KeysOfModTablesAreNeverMoved) {
  EXPECT_FALSE(checkEverySecond(t0_, 300, input({row(5, 900, 1000, "msg")})));
  EXPECT_NE(policy_.blocked().find("msg is a mod table"), std::string::npos) << policy_.blocked();
}

TEST_F(HotKeyPolicyTest, TheTargetIsTheLeastBusyOtherShard) {
  const uint64_t hot = keyOn("s01");
  const auto due = t0_ + seconds(60);
  ASSERT_FALSE(policy_.check(t0_, input({row(hot, 400, 600)})));
  auto d = policy_.check(due, input({row(hot, 400, 600)}, {{"s00", 50}, {"s01", 600}, {"s02", 10}, {"s03", 30}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->request.target, "s02");
  // A shard the tracker never saw counts as idle.
  HotKeyPolicy p;
  p.configure(settings_);
  ASSERT_FALSE(p.check(t0_, input({row(hot, 400, 600)})));
  d = p.check(due, input({row(hot, 400, 600)}, {{"s00", 50}, {"s01", 600}, {"s02", 10}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->request.target, "s03");
}

TEST_F(HotKeyPolicyTest, WithoutTrafficFiguresTheFirstOtherShardByNameIsChosen) {
  const uint64_t hot = keyOn("s00");
  ASSERT_FALSE(policy_.check(t0_, input({row(hot, 400, 600)})));
  auto d = policy_.check(t0_ + seconds(60), input({row(hot, 400, 600)}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->request.target, "s01");
}

TEST_F(HotKeyPolicyTest, TargetShardsRestrictTheChoice) {
  settings_.target_shards = {"s03", "s09"};  // s09 is no shard of the table: ignored
  policy_.configure(settings_);
  const uint64_t hot = keyOn("s01");
  ASSERT_FALSE(policy_.check(t0_, input({row(hot, 400, 600)})));
  auto d = policy_.check(t0_ + seconds(60), input({row(hot, 400, 600)}, {{"s02", 1}, {"s03", 90}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->request.target, "s03");
  // A key already on the only allowed shard has nowhere to go.
  const uint64_t on_s03 = keyOn("s03");
  HotKeyPolicy p;
  p.configure(settings_);
  ASSERT_FALSE(p.check(t0_, input({row(on_s03, 400, 600)})));
  EXPECT_FALSE(p.check(t0_ + seconds(60), input({row(on_s03, 400, 600)})));
  EXPECT_NE(p.blocked().find("target_shards"), std::string::npos) << p.blocked();
}

TEST_F(HotKeyPolicyTest, TurnedOffItForgetsAndDecidesNothing) {
  const uint64_t hot = keyOn("s01");
  EXPECT_FALSE(checkEverySecond(t0_, 50, input({row(hot, 400, 600)})));
  settings_.enabled = false;
  policy_.configure(settings_);
  EXPECT_FALSE(checkEverySecond(t0_ + seconds(50), 100, input({row(hot, 400, 600)})));
  settings_.enabled = true;
  policy_.configure(settings_);
  int at = -1;
  ASSERT_TRUE(checkEverySecond(t0_ + seconds(150), 120, input({row(hot, 400, 600)}), &at));
  EXPECT_EQ(at, 60);  // counted again from when it was turned on
}

}  // namespace
}  // namespace sp::proxy
