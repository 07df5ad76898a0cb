// Read-your-writes marks: which GTID a replica must have before it serves a
// session's read, and when only the primary will do.
#include "proxy/session/read_your_writes.hpp"

#include <gtest/gtest.h>

namespace sp::proxy {
namespace {

protocol::SessionChanges gtidReport(std::string gtid) {
  protocol::SessionChanges c;
  c.variables.push_back({"last_gtid", std::move(gtid)});
  return c;
}

TEST(ReadYourWrites, NothingWrittenNothingRequired) {
  ReadYourWrites r;
  r.afterPrimaryStatement("db0", {}, true, false, false);
  auto need = r.requirement("db0");
  EXPECT_FALSE(need.primary_only);
  EXPECT_FALSE(need.gtid);
}

TEST(ReadYourWrites, AnAutocommitWriteRequiresItsGtid) {
  ReadYourWrites r;
  r.afterPrimaryStatement("db0", gtidReport("0-1-5"), true, false, true);
  auto need = r.requirement("db0");
  EXPECT_FALSE(need.primary_only);
  ASSERT_TRUE(need.gtid);
  EXPECT_EQ(need.gtid->seq, 5u);
  EXPECT_FALSE(r.requirement("db1").gtid) << "per backend";
  r.afterPrimaryStatement("db0", gtidReport("0-1-9"), true, false, true);
  EXPECT_EQ(r.requirement("db0").gtid->seq, 9u);
}

TEST(ReadYourWrites, ATransactionsWritesAreOnThePrimaryUntilCommitReportsTheirGtid) {
  ReadYourWrites r;
  r.afterPrimaryStatement("db0", gtidReport("0-1-5"), true, false, true);
  r.afterPrimaryStatement("db0", {}, true, true, true);  // INSERT inside BEGIN
  EXPECT_TRUE(r.requirement("db0").primary_only);
  r.afterPrimaryStatement("db0", {}, true, true, false);  // a SELECT in the same transaction
  EXPECT_TRUE(r.requirement("db0").primary_only);
  r.afterPrimaryStatement("db0", gtidReport("0-1-6"), true, false, true);  // COMMIT
  EXPECT_FALSE(r.requirement("db0").primary_only);
  EXPECT_EQ(r.requirement("db0").gtid->seq, 6u);
}

TEST(ReadYourWrites, ARolledBackTransactionRequiresNothingNew) {
  ReadYourWrites r;
  r.afterPrimaryStatement("db0", {}, true, true, true);
  EXPECT_TRUE(r.requirement("db0").primary_only);
  r.afterPrimaryStatement("db0", {}, true, false, false);  // ROLLBACK
  EXPECT_FALSE(r.requirement("db0").primary_only);
  EXPECT_FALSE(r.requirement("db0").gtid);
}

TEST(ReadYourWrites, AWriteOfUnknownGtidWaitsForTheNextReportedOne) {
  ReadYourWrites r;
  r.markPending("db0");  // a split write
  EXPECT_TRUE(r.requirement("db0").primary_only);
  r.afterPrimaryStatement("db0", {}, true, false, false);  // a primary read reports nothing: still unknown
  EXPECT_TRUE(r.requirement("db0").primary_only);
  r.afterPrimaryStatement("db0", gtidReport("0-1-30"), true, false, true);
  EXPECT_FALSE(r.requirement("db0").primary_only);
  ReadYourWrites untracked;
  untracked.afterPrimaryStatement("db0", {}, false, false, true);
  EXPECT_TRUE(untracked.requirement("db0").primary_only) << "a server that reports nothing";
}

}  // namespace
}  // namespace sp::proxy
