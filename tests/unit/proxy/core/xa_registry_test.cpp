// Global transaction ids and their registry (xa_registry.hpp), and the
// SQLite decision log (xa_decision_log.hpp): a decision survives reopening.
#include <gtest/gtest.h>

#include <filesystem>

#include "proxy/core/xa_decision_log.hpp"
#include "proxy/core/xa_registry.hpp"

namespace sp::proxy {
namespace {

TEST(XaRegistry, AFleetMembersIdsCarryItsName) {
  XaRegistry r;
  r.configure("px", 36 * 36, "eu.p-1");
  EXPECT_EQ(r.start(1), "px-eu.p-1-100-1");
}

TEST(XaRegistry, RecoveredBranchesKeepTheLastOnes) {
  XaRegistry r;
  for (size_t i = 0; i < XaRegistry::kRecentRecoveries + 3; ++i) {
    r.addRecovered({"px-" + std::to_string(i), "db0", true, "own", std::chrono::steady_clock::now()});
  }
  auto rows = r.recovered();
  ASSERT_EQ(rows.size(), XaRegistry::kRecentRecoveries);
  EXPECT_EQ(rows.front().gtrid, "px-3");
  EXPECT_EQ(rows.back().gtrid, "px-" + std::to_string(XaRegistry::kRecentRecoveries + 2));
}

TEST(XaRegistry, IdsCarryThePrefixAndBootAndStayLiveUntilFinished) {
  XaRegistry r;
  r.configure("px", 36 * 36);
  const std::string a = r.start(7);
  const std::string b = r.start(8);
  EXPECT_EQ(a, "px-100-1");
  EXPECT_EQ(b, "px-100-2");
  EXPECT_TRUE(r.live(a));
  r.setPhase(a, XaPhase::kCommitting);
  r.setBranches(a, 2);
  auto open = r.open();
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(open[0].phase, XaPhase::kCommitting);
  EXPECT_EQ(open[0].branches, 2u);
  EXPECT_EQ(open[0].session, 7u);
  r.finish(a);
  EXPECT_FALSE(r.live(a));
  EXPECT_EQ(r.open().size(), 1u);
}

TEST(XaRegistry, InDoubtKeepsFirstSeen) {
  XaRegistry r;
  const auto t0 = std::chrono::steady_clock::now() - std::chrono::seconds(5);
  r.setInDoubt({{"sp-1-1", "db0", "db0", true, t0}});
  r.setInDoubt({{"sp-1-1", "db0", "db0", true, std::chrono::steady_clock::now()}});
  ASSERT_EQ(r.inDoubt().size(), 1u);
  EXPECT_EQ(r.inDoubt()[0].first_seen, t0);
  EXPECT_EQ(xaPhaseName(XaPhase::kRollingBack), "rolling_back");
}

TEST(XaDecisionLog, DecisionsSurviveReopeningAndAreForgotten) {
  const auto path = std::filesystem::temp_directory_path() / ("xa_log_test_" + std::to_string(::getpid()) + ".sqlite");
  std::filesystem::remove(path);
  {
    auto log = XaDecisionLog::open(path.string());
    ASSERT_TRUE(log) << log.error();
    EXPECT_TRUE((*log)->recordCommit("sp-1-1", 1000));
    EXPECT_TRUE((*log)->recordCommit("sp-1-2", 3000));
  }
  auto log = XaDecisionLog::open(path.string());
  ASSERT_TRUE(log) << log.error();
  EXPECT_TRUE((*log)->committed("sp-1-1"));
  EXPECT_FALSE((*log)->committed("sp-1-3"));
  EXPECT_EQ((*log)->decidedBefore(2000), std::vector<std::string>{"sp-1-1"});
  (*log)->forget("sp-1-1");
  EXPECT_FALSE((*log)->committed("sp-1-1"));
  EXPECT_EQ((*log)->size(), 1u);
  log->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

}  // namespace
}  // namespace sp::proxy
