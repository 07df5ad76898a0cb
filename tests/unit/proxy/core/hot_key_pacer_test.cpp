// HotKeyPacer (overload.hot_key_max_per_second): each key's writes get turns
// 1/rate apart from their first; a turn further than the longest wait is
// refused without being taken; keys are independent; memory stays bounded.
#include "proxy/core/hot_key_pacer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sp::proxy {
namespace {

using namespace std::chrono_literals;
using Clock = HotKeyPacer::Clock;

TEST(HotKeyPacer, OffPacesNothing) {
  HotKeyPacer pacer;
  EXPECT_FALSE(pacer.enabled());
  const auto now = Clock::now();
  for (int i = 0; i < 100; ++i) {
    auto turn = pacer.reserve("msg:7", now);
    EXPECT_FALSE(turn.refused);
    EXPECT_EQ(turn.at, now);
  }
  EXPECT_EQ(pacer.keys(), 0u);
}

TEST(HotKeyPacer, TurnsOfOneKeyAreSpacedByOneOverTheRate) {
  HotKeyPacer pacer;
  pacer.configure(100, 1000ms);  // a turn every 10 ms
  const auto t0 = Clock::now();
  EXPECT_EQ(pacer.reserve("msg:7", t0).at, t0);  // the first write of a key: at once
  EXPECT_EQ(pacer.reserve("msg:7", t0).at, t0 + 10ms);
  EXPECT_EQ(pacer.reserve("msg:7", t0 + 1ms).at, t0 + 20ms);
  // Another key is not behind this one.
  EXPECT_EQ(pacer.reserve("msg:8", t0 + 1ms).at, t0 + 1ms);
  // Idle longer than its turns: at once again, no credit saved for a burst.
  EXPECT_EQ(pacer.reserve("msg:7", t0 + 500ms).at, t0 + 500ms);
  EXPECT_EQ(pacer.reserve("msg:7", t0 + 500ms).at, t0 + 510ms);
}

TEST(HotKeyPacer, ATurnBeyondTheLongestWaitIsRefusedAndNotTaken) {
  HotKeyPacer pacer;
  pacer.configure(10, 250ms);  // a turn every 100 ms, at most 250 ms of wait
  const auto t0 = Clock::now();
  EXPECT_EQ(pacer.reserve("k", t0).at, t0);
  EXPECT_EQ(pacer.reserve("k", t0).at, t0 + 100ms);
  EXPECT_EQ(pacer.reserve("k", t0).at, t0 + 200ms);
  auto refused = pacer.reserve("k", t0);  // 300 ms away
  EXPECT_TRUE(refused.refused);
  EXPECT_EQ(refused.at, t0 + 300ms);
  EXPECT_EQ(pacer.stats().refused, 1u);
  // The refused turn was not taken: the next write gets it once it is near.
  EXPECT_EQ(pacer.reserve("k", t0 + 60ms).at, t0 + 300ms);
}

TEST(HotKeyPacer, WaitsAreCountedAndANewRateAppliesToTheNextWrite) {
  HotKeyPacer pacer;
  pacer.configure(1000, 1000ms);
  pacer.noteWait(3ms, false);
  pacer.noteWait(1ms, true);
  auto s = pacer.stats();
  EXPECT_EQ(s.paced, 1u);
  EXPECT_EQ(s.interrupted, 1u);
  EXPECT_NEAR(s.wait_seconds_sum, 0.004, 1e-9);
  const auto t0 = Clock::now();
  pacer.reserve("k", t0);
  pacer.configure(1, 5000ms);
  EXPECT_EQ(pacer.reserve("k", t0).at, t0 + 1ms);  // the turn taken at 1000/s
  EXPECT_EQ(pacer.reserve("k", t0).at, t0 + 1001ms);
  pacer.configure(0, 5000ms);
  EXPECT_FALSE(pacer.enabled());
  EXPECT_EQ(pacer.reserve("k", t0).at, t0);
}

TEST(HotKeyPacer, MemoryIsBoundedAndKeysWhoseTurnPassedAreSwept) {
  HotKeyPacer pacer;
  pacer.configure(1, 1000ms);
  const auto t0 = Clock::now();
  const size_t capacity = HotKeyPacer::kStripes * HotKeyPacer::kKeysPerStripe;
  for (size_t i = 0; i < capacity * 2; ++i) pacer.reserve("k" + std::to_string(i), t0);
  EXPECT_LE(pacer.keys(), capacity);
  EXPECT_GT(pacer.stats().untracked, 0u);  // a full stripe of hot keys: new ones pass unpaced
  // A second later every turn has passed: room again.
  const auto later = t0 + 2s;
  for (size_t i = 0; i < 1000; ++i) pacer.reserve("n" + std::to_string(i), later);
  const uint64_t untracked = pacer.stats().untracked;
  EXPECT_EQ(pacer.reserve("n0", later).at, later + 1s);  // tracked, so paced
  EXPECT_EQ(pacer.stats().untracked, untracked);
}

}  // namespace
}  // namespace sp::proxy
