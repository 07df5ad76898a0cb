// The notes a pending target cleanup leaves on a move's record and when it is
// tried again (proxy/move/target_cleanup.hpp).
#include "proxy/move/target_cleanup.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "proxy/move/move_store.hpp"

namespace sp::proxy {
namespace {

using Clock = TargetCleanupSchedule::Clock;
using std::chrono::milliseconds;

TEST(TargetCleanupNotes, PendingThenDoneKeepsWhyTheMoveStopped) {
  MoveRecord r;
  r.message = "copy: backend db1: connection refused";
  noteTargetNotCleared(r, "backend db1: connection refused");
  EXPECT_EQ(r.target_cleanup, TargetCleanup::kPending);
  EXPECT_NE(r.message.find("not deleted"), std::string::npos);
  EXPECT_EQ(describeTargetCleanup(r, ""), "pending");
  EXPECT_EQ(describeTargetCleanup(r, "refused"), "pending (last try: refused)");

  noteTargetCleared(r, "2026-01-02 03:04:05");
  EXPECT_EQ(r.target_cleanup, TargetCleanup::kDone);
  EXPECT_EQ(r.target_cleanup_at, "2026-01-02 03:04:05");
  EXPECT_EQ(r.message.find("not deleted"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.rfind("copy: backend db1: connection refused; the target's copied rows were deleted", 0), 0u)
      << r.message;
  EXPECT_EQ(describeTargetCleanup(r, ""), "done 2026-01-02 03:04:05");
}

TEST(TargetCleanupNotes, AbandonedSaysWhy) {
  MoveRecord r;
  EXPECT_EQ(describeTargetCleanup(r, ""), "-");
  r.message = "cancelled during the copy";
  noteTargetNotCleared(r, "down");
  noteTargetCleanupAbandoned(r, "the map in force routes the moving keys to the target now");
  EXPECT_EQ(r.target_cleanup, TargetCleanup::kAbandoned);
  EXPECT_EQ(r.message, "cancelled during the copy; the target's copied rows were not deleted: the map in force "
                       "routes the moving keys to the target now");
  EXPECT_EQ(describeTargetCleanup(r, ""), "abandoned");
}

TEST(TargetCleanupNotes, StateNamesRoundTrip) {
  for (auto c : {TargetCleanup::kNone, TargetCleanup::kPending, TargetCleanup::kDone, TargetCleanup::kAbandoned}) {
    EXPECT_EQ(targetCleanupFrom(toString(c)), c);
  }
  EXPECT_FALSE(targetCleanupFrom("bogus"));
}

TEST(TargetCleanupSchedule, BacksOffBetweenFailedTries) {
  TargetCleanupSchedule s(milliseconds(1000), milliseconds(4000));
  const auto t0 = Clock::now();
  EXPECT_TRUE(s.due(1, t0, std::nullopt));  // the first try at once
  s.failed(1, t0);
  EXPECT_FALSE(s.due(1, t0 + milliseconds(999), std::nullopt));
  EXPECT_TRUE(s.due(1, t0 + milliseconds(1000), std::nullopt));
  s.failed(1, t0 + milliseconds(1000));  // 2 s
  EXPECT_FALSE(s.due(1, t0 + milliseconds(2999), std::nullopt));
  EXPECT_TRUE(s.due(1, t0 + milliseconds(3000), std::nullopt));
  s.failed(1, t0 + milliseconds(3000));  // 4 s
  s.failed(1, t0 + milliseconds(3000));  // capped at 4 s
  EXPECT_FALSE(s.due(1, t0 + milliseconds(6999), std::nullopt));
  EXPECT_TRUE(s.due(1, t0 + milliseconds(7000), std::nullopt));
  EXPECT_TRUE(s.due(2, t0, std::nullopt));  // per move
}

TEST(TargetCleanupSchedule, WaitsWhileDownAndTriesAtOnceWhenBack) {
  TargetCleanupSchedule s(milliseconds(1000), milliseconds(8000));
  const auto t0 = Clock::now();
  s.failed(1, t0);
  s.failed(1, t0);  // next try 2 s later
  EXPECT_FALSE(s.due(1, t0 + milliseconds(5000), false));  // the monitor calls it down: no try
  EXPECT_TRUE(s.due(1, t0 + milliseconds(100), true));     // it answers again: at once, backoff or not
  s.failed(1, t0 + milliseconds(100));
  EXPECT_FALSE(s.due(1, t0 + milliseconds(200), true));   // up all along: the backoff again
  s.forget(1);
  EXPECT_TRUE(s.due(1, t0 + milliseconds(200), true));
}

// The sweep reads only the moves whose target cleanup is stored as pending,
// newest first, not every move ever run.
TEST(TargetCleanupNotes, StoreListsOnlyPendingCleanups) {
  const auto path = std::filesystem::temp_directory_path() / ("sp-move-store-" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  auto store = MoveStore::open(path.string());
  ASSERT_TRUE(store) << store.error();
  std::vector<int64_t> ids;
  for (TargetCleanup c : {TargetCleanup::kPending, TargetCleanup::kNone, TargetCleanup::kPending, TargetCleanup::kDone}) {
    MoveRecord r;
    r.target_cleanup = c;
    ASSERT_TRUE((*store)->save(r));
    ids.push_back(r.id);
  }
  auto pending = (*store)->listWithTargetCleanup(TargetCleanup::kPending);
  ASSERT_TRUE(pending) << pending.error();
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].id, ids[2]);
  EXPECT_EQ((*pending)[1].id, ids[0]);
  auto all = (*store)->list();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 4u);
  store->reset();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sp::proxy
