// MergeBudget: the memory all concurrent scatter merges hold together
// (scatter.max_merge_bytes_total).
#include "routing/merge/merge_budget.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sp::routing {
namespace {

constexpr uint64_t kStep = MergeBudget::kStep;

TEST(MergeBudget, ReservesInStepsAndReleasesOnDestruction) {
  MergeBudget budget(10 * kStep);
  {
    MergeBudget::Reservation r(budget);
    EXPECT_TRUE(r.cover(1));
    EXPECT_EQ(r.held(), kStep);
    EXPECT_TRUE(r.cover(kStep));  // within what it holds: no change
    EXPECT_EQ(budget.used(), kStep);
    EXPECT_TRUE(r.cover(3 * kStep + 1));
    EXPECT_EQ(r.held(), 4 * kStep);
    EXPECT_EQ(budget.used(), 4 * kStep);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MergeBudget, RefusesWhatTheRestCannotCoverAndKeepsWhatItHeld) {
  MergeBudget budget(10 * kStep);
  MergeBudget::Reservation a(budget), b(budget);
  ASSERT_TRUE(a.cover(7 * kStep));
  EXPECT_TRUE(b.cover(3 * kStep));    // exactly the rest
  EXPECT_FALSE(b.cover(3 * kStep + 1));  // one byte more: a step more than is left
  EXPECT_EQ(b.held(), 3 * kStep);
  EXPECT_EQ(budget.used(), 10 * kStep);
  b.release();  // the refused statement ends
  EXPECT_EQ(budget.used(), 7 * kStep);
  MergeBudget::Reservation c(budget);
  EXPECT_TRUE(c.cover(3 * kStep));  // another session carries on
  EXPECT_FALSE(c.cover(4 * kStep));
  a.release();
  EXPECT_TRUE(c.cover(4 * kStep));
}

TEST(MergeBudget, ASingleStatementOverTheWholeBudgetIsRefused) {
  MergeBudget budget(4 * kStep);
  MergeBudget::Reservation r(budget);
  EXPECT_FALSE(r.cover(4 * kStep + 1));
  EXPECT_EQ(r.held(), 0u);
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MergeBudget, GivesBackASurplusOnlyPastTheSlack) {
  MergeBudget budget(100 * kStep);
  MergeBudget::Reservation r(budget);
  ASSERT_TRUE(r.cover(40 * kStep));
  EXPECT_TRUE(r.cover(30 * kStep));  // 10 steps below: kept (no churn on the shared counter)
  EXPECT_EQ(r.held(), 40 * kStep);
  EXPECT_TRUE(r.cover(40 * kStep - MergeBudget::kShrinkSlack));
  EXPECT_EQ(r.held(), 40 * kStep - MergeBudget::kShrinkSlack);
  EXPECT_EQ(budget.used(), r.held());
}

TEST(MergeBudget, MovedReservationReleasesOnce) {
  MergeBudget budget(10 * kStep);
  {
    MergeBudget::Reservation a(budget);
    ASSERT_TRUE(a.cover(2 * kStep));
    MergeBudget::Reservation b(std::move(a));
    EXPECT_EQ(a.held(), 0u);
    EXPECT_EQ(b.held(), 2 * kStep);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(MergeBudget, ConcurrentStatementsNeverExceedTheTotal) {
  constexpr uint64_t kTotal = 64 * kStep;
  MergeBudget budget(kTotal);
  std::atomic<uint64_t> peak{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 2000; ++round) {
        MergeBudget::Reservation r(budget);
        for (uint64_t bytes = kStep; bytes <= 24 * kStep; bytes += 3 * kStep) {
          if (!r.cover(bytes)) {
            refused.fetch_add(1);
            break;
          }
          uint64_t used = budget.used(), seen = peak.load();
          while (used > seen && !peak.compare_exchange_weak(seen, used)) {
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), kTotal);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace sp::routing
