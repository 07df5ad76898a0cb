// The commit protocol of global transactions (proxy/exec/xa_commit.hpp) with
// scripted participants: the statements each branch receives, in order; the
// decision written only after every prepare and before any XA COMMIT; a
// failure before the decision rolls every branch back; one after it still
// commits (recovery finishes the branch that did not answer).
#include <gtest/gtest.h>

#include <map>

#include "proxy/exec/xa_commit.hpp"
#include "proxy/exec/xa_recovery.hpp"
#include "tests/unit/proxy/exec/scripted_shard.hpp"

namespace sp::proxy {
namespace {

using test::runToEnd;

// Records every statement into a shared journal; fails the statement that
// starts with `fail_on` (server error or lost connection).
class FakeBranch final : public XaParticipant {
 public:
  FakeBranch(std::string name, std::vector<std::string>& journal) : name_(std::move(name)), journal_(journal) {}
  const std::string& name() const override { return name_; }
  awaitable<XaReply> run(std::string sql) override {
    journal_.push_back(name_ + ": " + sql);
    XaReply r;
    if (lost_) {
      r.kind = XaReply::Kind::kLost;
    } else if (!fail_on.empty() && sql.starts_with(fail_on)) {
      if (lose) {
        r.kind = XaReply::Kind::kLost;
        lost_ = true;
      } else {
        r.kind = XaReply::Kind::kServerError;
        r.error = {1213, "40001", "Deadlock found"};
      }
    }
    co_return r;
  }
  std::string fail_on;
  bool lose = false;

 private:
  std::string name_;
  std::vector<std::string>& journal_;
  bool lost_ = false;
};

class FakeDecisions final : public XaDecisions {
 public:
  explicit FakeDecisions(std::vector<std::string>& journal) : journal_(journal) {}
  awaitable<XaDecisionWrite> recordCommit(const std::string& gtrid) override {
    journal_.push_back("decision: " + gtrid);
    if (unknown) co_return XaDecisionWrite::kUnknown;
    if (refuse) co_return XaDecisionWrite::kRefused;
    decided.insert(gtrid);
    co_return XaDecisionWrite::kRecorded;
  }
  void forget(const std::string& gtrid) override {
    journal_.push_back("forget: " + gtrid);
    decided.erase(gtrid);
  }
  bool refuse = false;
  bool unknown = false;
  std::set<std::string> decided;

 private:
  std::vector<std::string>& journal_;
};

struct Fixture {
  std::vector<std::string> journal;
  FakeBranch a{"db0", journal};
  FakeBranch b{"db1", journal};
  FakeDecisions log{journal};
  std::vector<XaStep> steps;
  XaFailPoint fail = [this](XaStep s) { steps.push_back(s); };
  XaOutcome commit(std::vector<XaParticipant*> parts) {
    return runToEnd(commitGlobal("sp-1-1", parts, log, fail));
  }
};

TEST(XaCommit, OneBranchCommitsInOnePhase) {
  Fixture f;
  auto out = f.commit({&f.a});
  EXPECT_TRUE(out.committed);
  EXPECT_EQ(f.journal, (std::vector<std::string>{"db0: XA END 'sp-1-1','db0'",
                                                 "db0: XA COMMIT 'sp-1-1','db0' ONE PHASE"}));
  EXPECT_TRUE(f.steps.empty());
}

TEST(XaCommit, OneBranchFailingItsCommitIsRolledBackWithTheServersError) {
  Fixture f;
  f.a.fail_on = "XA COMMIT";
  auto out = f.commit({&f.a});
  EXPECT_FALSE(out.committed);
  EXPECT_EQ(out.error.error_code, 1213);
  EXPECT_EQ(f.journal.back(), "db0: XA ROLLBACK 'sp-1-1','db0'");
}

TEST(XaCommit, TwoBranchesPrepareThenDecideThenCommit) {
  Fixture f;
  auto out = f.commit({&f.a, &f.b});
  EXPECT_TRUE(out.committed);
  EXPECT_EQ(out.unfinished, 0u);
  EXPECT_EQ(f.journal, (std::vector<std::string>{
                           "db0: XA END 'sp-1-1','db0'", "db0: XA PREPARE 'sp-1-1','db0'",
                           "db1: XA END 'sp-1-1','db1'", "db1: XA PREPARE 'sp-1-1','db1'",
                           "decision: sp-1-1", "db0: XA COMMIT 'sp-1-1','db0'", "db1: XA COMMIT 'sp-1-1','db1'",
                           "forget: sp-1-1"}));
  EXPECT_EQ(f.steps, (std::vector<XaStep>{XaStep::kAfterFirstPrepare, XaStep::kAfterPrepares, XaStep::kAfterDecision,
                                          XaStep::kBetweenCommits}));
}

TEST(XaCommit, AFailedPrepareRollsEveryBranchBackAndDecidesNothing) {
  Fixture f;
  f.b.fail_on = "XA PREPARE";
  auto out = f.commit({&f.a, &f.b});
  EXPECT_FALSE(out.committed);
  EXPECT_EQ(out.error.error_code, 1213);
  for (const auto& line : f.journal) EXPECT_FALSE(line.starts_with("decision")) << line;
  EXPECT_NE(std::find(f.journal.begin(), f.journal.end(), "db0: XA ROLLBACK 'sp-1-1','db0'"), f.journal.end());
  EXPECT_NE(std::find(f.journal.begin(), f.journal.end(), "db1: XA ROLLBACK 'sp-1-1','db1'"), f.journal.end());
}

TEST(XaCommit, AFailedEndPreparesNothingAndRollsBackWithItsError) {
  Fixture f;
  f.b.fail_on = "XA END";
  auto out = f.commit({&f.a, &f.b});
  EXPECT_FALSE(out.committed);
  EXPECT_EQ(out.error.error_code, 1213) << "the XA END's error, not the XA PREPARE's";
  for (const auto& line : f.journal) EXPECT_FALSE(line.starts_with("decision")) << line;
  EXPECT_NE(std::find(f.journal.begin(), f.journal.end(), "db0: XA ROLLBACK 'sp-1-1','db0'"), f.journal.end());
  EXPECT_NE(std::find(f.journal.begin(), f.journal.end(), "db1: XA ROLLBACK 'sp-1-1','db1'"), f.journal.end());
}

TEST(XaCommit, ALostBranchBeforeTheDecisionRollsBackWith9004) {
  Fixture f;
  f.b.fail_on = "XA END";
  f.b.lose = true;
  auto out = f.commit({&f.a, &f.b});
  EXPECT_FALSE(out.committed);
  EXPECT_EQ(out.error.error_code, 9004);
  EXPECT_NE(out.error.message.find("db1"), std::string::npos);
  EXPECT_NE(std::find(f.journal.begin(), f.journal.end(), "db0: XA ROLLBACK 'sp-1-1','db0'"), f.journal.end());
}

TEST(XaCommit, AnUnwritableDecisionRollsBack) {
  Fixture f;
  f.log.refuse = true;
  auto out = f.commit({&f.a, &f.b});
  EXPECT_FALSE(out.committed);
  EXPECT_EQ(out.error.error_code, 9170);
  EXPECT_EQ(f.journal.back(), "db1: XA ROLLBACK 'sp-1-1','db1'");
}

TEST(XaCommit, AnUnconfirmedDecisionLeavesEveryBranchPreparedWith9174) {
  Fixture f;
  f.log.unknown = true;
  auto out = f.commit({&f.a, &f.b});
  EXPECT_FALSE(out.committed);
  EXPECT_TRUE(out.in_doubt);
  EXPECT_EQ(out.error.error_code, 9174);
  EXPECT_EQ(f.journal.back(), "decision: sp-1-1");  // neither XA COMMIT nor XA ROLLBACK: recovery settles it
}

TEST(XaCommit, ABranchLostAfterTheDecisionStillCommitsAndKeepsTheDecision) {
  Fixture f;
  f.b.fail_on = "XA COMMIT";
  f.b.lose = true;
  auto out = f.commit({&f.a, &f.b});
  EXPECT_TRUE(out.committed);
  EXPECT_EQ(out.unfinished, 1u);
  EXPECT_TRUE(f.log.decided.contains("sp-1-1"));  // recovery commits db1's branch from it
  for (const auto& line : f.journal) EXPECT_EQ(line.find("ROLLBACK"), std::string::npos) << line;
}

TEST(XaCommit, RollbackEndsAndRollsBackEveryBranch) {
  Fixture f;
  std::vector<XaParticipant*> parts{&f.a, &f.b};
  runToEnd([&]() -> awaitable<int> {
    co_await rollbackGlobal("sp-1-1", parts);
    co_return 0;
  }());
  EXPECT_EQ(f.journal, (std::vector<std::string>{"db0: XA END 'sp-1-1','db0'", "db0: XA ROLLBACK 'sp-1-1','db0'",
                                                 "db1: XA END 'sp-1-1','db1'", "db1: XA ROLLBACK 'sp-1-1','db1'"}));
}

TEST(XaCommit, FailPointNames) {
  EXPECT_EQ(parseXaStep("after_first_prepare"), XaStep::kAfterFirstPrepare);
  EXPECT_EQ(parseXaStep("after_prepares"), XaStep::kAfterPrepares);
  EXPECT_EQ(parseXaStep("after_decision"), XaStep::kAfterDecision);
  EXPECT_EQ(parseXaStep("between_commits"), XaStep::kBetweenCommits);
  EXPECT_EQ(parseXaStep("never"), std::nullopt);
}

// ---- recovery's decisions (xa_recovery.hpp) ----

XaRecoverRows recoverRows(std::vector<std::array<std::string, 4>> rows) {
  XaRecoverRows out;
  for (auto& r : rows) out.push_back({r[0], r[1], r[2], r[3]});
  return out;
}

TEST(XaRecovery, KeepsOnlyThisProxysWellFormedBranches) {
  auto rows = recoverRows({{"1", "7", "3", "sp-a-17db0"},       // ours
                           {"1", "7", "3", "sq-a-17db0"},       // another prefix
                           {"1", "6", "3", "spa-17db0"},        // prefix not followed by '-'
                           {"2", "7", "3", "sp-a-17db0"},       // another format
                           {"1", "7", "4", "sp-a-17db0"},       // lengths do not add up
                           {"1", "7", "3", "sp-a-1'db0"},       // a quote: never ours
                           {"1", "x", "3", "sp-a-17db0"},
                           {"1", "10", "3", "sp-p.1-a-1db1"}});  // a fleet member's ('.' of fleet.name)
  rows.push_back({std::string("1"), std::nullopt, std::string("3"), std::string("sp-a-17db0")});
  auto own = ownBranches(rows, "sp");
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0].gtrid, "sp-a-17");
  EXPECT_EQ(own[0].bqual, "db0");
  EXPECT_EQ(own[1].gtrid, "sp-p.1-a-1");
  EXPECT_EQ(own[1].bqual, "db1");
}

TEST(XaRecovery, LiveIsLeftDecidedCommitsUndecidedRollsBack) {
  EXPECT_EQ(resolveBranch(true, true), XaResolution::kLeaveLive);
  EXPECT_EQ(resolveBranch(true, false), XaResolution::kLeaveLive);
  EXPECT_EQ(resolveBranch(false, true), XaResolution::kCommit);
  EXPECT_EQ(resolveBranch(false, false), XaResolution::kRollback);
  XaListedBranch b{"sp-a-1", "db1"};
  EXPECT_EQ(resolutionSql(b, XaResolution::kCommit), "XA COMMIT 'sp-a-1','db1'");
  EXPECT_EQ(resolutionSql(b, XaResolution::kRollback), "XA ROLLBACK 'sp-a-1','db1'");
  EXPECT_EQ(resolutionSql(b, XaResolution::kLeaveLive), "");
}

}  // namespace
}  // namespace sp::proxy
