#include "proxy/exec/xa_fleet_resolution.hpp"

#include <gtest/gtest.h>

namespace sp::proxy {
namespace {

TEST(XaFleetResolution, GtridOwnerReadsMemberAndBootFromTheRight) {
  auto o = gtridOwner("sp-p1-mi8k2x1c-1z", "sp");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->member, "p1");
  EXPECT_EQ(o->boot, "mi8k2x1c");
  // Member names may hold '-' and '.'.
  auto dashed = gtridOwner("sp-eu-west.p-1-mi8k2x1c-3", "sp");
  ASSERT_TRUE(dashed);
  EXPECT_EQ(dashed->member, "eu-west.p-1");
  // A proxy alone: no member.
  auto alone = gtridOwner("sp-mi8k2x1c-3", "sp");
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->member, "");
  EXPECT_EQ(alone->boot, "mi8k2x1c");
  for (const char* bad : {"sp", "sp-", "sp-3", "spx-p1-a-1", "other-p1-a-1", "sp-p1-A-1", "sp-p1-a-", "sp--a-1",
                          "sp-p1-a-1_"}) {
    EXPECT_FALSE(gtridOwner(bad, "sp")) << bad;
  }
}

FleetBranchFacts facts(bool etcd_read, bool own, bool live, bool owner_registered,
                       std::optional<XaStoredOutcome> decision) {
  return {etcd_read, own, live, owner_registered, decision};
}

constexpr auto kCommit = XaStoredOutcome::kCommit;
constexpr auto kRollback = XaStoredOutcome::kRollback;

TEST(XaFleetResolution, OwnLiveBranchIsLeftToItsCommit) {
  EXPECT_EQ(resolveFleetBranch(facts(true, true, true, true, std::nullopt)), FleetResolution::kLeaveLive);
  EXPECT_EQ(resolveFleetBranch(facts(false, true, true, true, kCommit)), FleetResolution::kLeaveLive);
}

TEST(XaFleetResolution, OwnFinishedBranchFollowsItsRecord) {
  // This run's or an earlier run's under the same name: whether the member key is there does not matter.
  for (bool registered : {true, false}) {
    EXPECT_EQ(resolveFleetBranch(facts(true, true, false, registered, kCommit)), FleetResolution::kCommit);
    EXPECT_EQ(resolveFleetBranch(facts(true, true, false, registered, kRollback)), FleetResolution::kRollback);
    EXPECT_EQ(resolveFleetBranch(facts(true, true, false, registered, std::nullopt)), FleetResolution::kSettle);
  }
}

TEST(XaFleetResolution, AnotherAliveMembersBranchWaitsWhateverItsRecord) {
  for (auto d : {std::optional<XaStoredOutcome>{}, std::optional{kCommit}, std::optional{kRollback}}) {
    EXPECT_EQ(resolveFleetBranch(facts(true, false, false, true, d)), FleetResolution::kWaitOwner);
  }
}

TEST(XaFleetResolution, AGoneMembersBranchFollowsItsRecordOrIsSettled) {
  EXPECT_EQ(resolveFleetBranch(facts(true, false, false, false, kCommit)), FleetResolution::kCommit);
  EXPECT_EQ(resolveFleetBranch(facts(true, false, false, false, kRollback)), FleetResolution::kRollback);
  EXPECT_EQ(resolveFleetBranch(facts(true, false, false, false, std::nullopt)), FleetResolution::kSettle);
}

TEST(XaFleetResolution, EtcdUnreadableMeansWaitForEveryFinishedBranch) {
  for (bool own : {true, false}) {
    for (bool registered : {true, false}) {
      for (auto d : {std::optional<XaStoredOutcome>{}, std::optional{kCommit}}) {
        EXPECT_EQ(resolveFleetBranch(facts(false, own, false, registered, d)), FleetResolution::kWaitEtcd);
      }
    }
  }
}

}  // namespace
}  // namespace sp::proxy
