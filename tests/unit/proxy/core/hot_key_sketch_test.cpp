// Hot-key counting (hot_key_sketch.hpp, hot_key_tracker.hpp): bounded
// memory whatever the keys, the heavy key found among a million others,
// rates decayed over time, shares of a shard, and MOVE KEY followed.
#include <gtest/gtest.h>

#include <random>

#include "proxy/core/hot_key_tracker.hpp"

namespace sp::proxy {
namespace {

TEST(HotKeySketchTest, BoundedUnderAMillionDistinctKeysAndFindsTheHeavyOne) {
  HotKeySketch sketch(32);
  std::mt19937_64 rng(42);
  uint64_t hot_count = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    // One key in ten is key 7; the rest are (nearly all) distinct.
    if (i % 10 == 0) {
      sketch.add(7, 1.0, true, "s0", "db0");
      ++hot_count;
    } else {
      sketch.add(rng() | (1ull << 40), 1.0, false, "s1", "db1");
    }
    ASSERT_LE(sketch.entries().size(), 32u);
  }
  const HotKeySketch::Entry* top = nullptr;
  for (const auto& e : sketch.entries()) {
    if (!top || e.count - e.error > top->count - top->error) top = &e;
  }
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->key, 7u);
  EXPECT_LE(top->count - top->error, static_cast<double>(hot_count));  // never overstated
  EXPECT_GE(top->count, static_cast<double>(hot_count));
  EXPECT_EQ(top->shard, "s0");
}

TEST(HotKeyTrackerTest, AKeyAtTwentyTimesTheRateOfOthersIsListedFirstWithItsShare) {
  HotKeyTracker tracker(64);
  // 10 s at 10 ms steps: 50 keys of one shard each written once a second,
  // key 1000 twenty times a second.
  for (int step = 0; step < 1000; ++step) {
    const double now = step * 0.01;
    if (step % 5 == 0) tracker.record("msg", 1000, true, "s0", "db0", now);
    if (step % 2 == 0) tracker.record("msg", static_cast<uint64_t>(step / 2 % 50), step % 4 == 0, "s0", "db0", now);
  }
  auto rows = tracker.top(5, 10.0);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].table, "msg");
  EXPECT_EQ(rows[0].key, 1000u);
  EXPECT_EQ(rows[0].backend, "db0");
  EXPECT_NEAR(rows[0].statements_per_s, 20.0, 3.0);
  EXPECT_NEAR(rows[0].writes_per_s, 20.0, 3.0);
  // 20 of the shard's 70 statements a second.
  EXPECT_NEAR(rows[0].share(), 20.0 / 70.0, 0.05);
  ASSERT_GE(rows.size(), 2u);
  EXPECT_LT(rows[1].statements_per_s, 3.0);
}

TEST(HotKeyTrackerTest, RatesDecayAndTheLandmarkMovesWithoutLosingThem) {
  HotKeyTracker tracker(16);
  for (int i = 0; i < 100; ++i) tracker.record("t", 1, false, "s0", "db0", 1000.0 + i * 0.1);
  const double fresh = tracker.top(1, 1010.0).at(0).statements_per_s;
  EXPECT_GT(fresh, 5.0);
  // Long after (the weights' landmark moves on the next record): decayed away.
  tracker.record("t", 2, false, "s0", "db0", 5000.0);
  auto later = tracker.top(2, 5000.0);
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].key, 2u);
  EXPECT_LT(later[1].statements_per_s, 1e-6);
}

TEST(HotKeyTrackerTest, MemoryStaysBoundedAcrossTablesAndAMoveIsFollowed) {
  HotKeyTracker tracker(64);
  for (uint64_t k = 0; k < 200'000; ++k) tracker.record(k % 2 ? "msg" : "tg_channel_message", k, false, "s0", "db0", 1.0);
  EXPECT_LE(tracker.counters(), 2 * 64u + 2 * HotKeyTracker::kStripes);
  tracker.record("msg", 1, true, "s9", "db9", 2.0);  // MOVE KEY 1 OF msg TO s9
  for (const auto& r : tracker.top(1000, 2.0)) {
    if (r.table == "msg" && r.key == 1) EXPECT_EQ(r.shard, "s9");
  }
  tracker.configure(0);
  tracker.record("msg", 5, true, "s0", "db0", 3.0);
  EXPECT_EQ(tracker.counters(), 0u);
}

}  // namespace
}  // namespace sp::proxy
