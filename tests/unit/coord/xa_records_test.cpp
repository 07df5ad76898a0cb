#include "coord/xa_records.hpp"

#include <gtest/gtest.h>

#include "coord/etcd_messages.hpp"

namespace sp::coord {
namespace {

TEST(XaRecords, KeysLiveOutsideTheWatchedRange) {
  // The fleet agent watches [prefix/fence/, prefix/map]: decisions are read by recovery, never watched.
  const std::string key = xaDecisionKey("/sp/", "sp-p1-mi8k2x1c-1");
  EXPECT_EQ(key, "/sp/xa/decisions/sp-p1-mi8k2x1c-1");
  EXPECT_GT(key, std::string("/sp/map"));
  EXPECT_EQ(xaDecisionsPrefix("/sp"), "/sp/xa/decisions/");
  EXPECT_EQ(xaDecisionGtrid("/sp", key), "sp-p1-mi8k2x1c-1");
  EXPECT_EQ(xaDecisionGtrid("/sp", "/sp/xa/decisions/"), "");
  EXPECT_EQ(xaDecisionGtrid("/sp", "/sp/proxies/p1"), "");
}

TEST(XaRecords, EncodesACommitExactly) {
  const XaDecisionRecord record{XaOutcome::kCommit, "p1", {"db0", "db1"}, 1764864000123};
  EXPECT_EQ(encodeXaDecision(record),
            R"j({"outcome":"commit","proxy":"p1","branches":["db0","db1"],"decided_unix_ms":1764864000123})j");
}

TEST(XaRecords, EncodesARollbackExactly) {
  const XaDecisionRecord record{XaOutcome::kRollback, "p2", {}, 5};
  EXPECT_EQ(encodeXaDecision(record), R"j({"outcome":"rollback","proxy":"p2","branches":[],"decided_unix_ms":5})j");
}

TEST(XaRecords, DecodesWhatWasWritten) {
  auto r = decodeXaDecision(R"j({"outcome":"commit","proxy":"p1","branches":["db0","db1"],"decided_unix_ms":7})j");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->outcome, XaOutcome::kCommit);
  EXPECT_EQ(r->proxy, "p1");
  EXPECT_EQ(r->branches, (std::vector<std::string>{"db0", "db1"}));
  EXPECT_EQ(r->decided_unix_ms, 7);
  auto rb = decodeXaDecision(R"j({"outcome":"rollback","proxy":"p2"})j");
  ASSERT_TRUE(rb) << rb.error();
  EXPECT_EQ(rb->outcome, XaOutcome::kRollback);
}

TEST(XaRecords, MalformedRecordsAreRefusedNeverGuessed) {
  for (const char* bad : {
           "", "not json", "[]", "{}",                                     // no outcome
           R"j({"outcome":"commited","proxy":"p1"})j",                     // unknown outcome
           R"j({"outcome":"COMMIT","proxy":"p1"})j",                       // case matters
           R"j({"outcome":1,"proxy":"p1"})j",                              // wrong type
           R"j({"outcome":"commit"})j",                                    // no proxy
           R"j({"outcome":"commit","proxy":""})j",                         // empty proxy
           R"j({"outcome":"commit","proxy":"p1","branches":"db0"})j",      // branches not a list
           R"j({"outcome":"commit","proxy":"p1","branches":[1]})j",        // branch not a string
           R"j({"outcome":"commit","proxy":"p1","decided_unix_ms":"x"})j"  // time not a number
       }) {
    auto r = decodeXaDecision(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) EXPECT_NE(r.error().find("XA decision"), std::string::npos) << r.error();
  }
}

TEST(XaRecords, TheFencedCreateComparesTheMembersLeaseAndTheKeysAbsence) {
  const EtcdLeaseFence fence{"/sp/proxies/p1", 7587};
  EXPECT_EQ(etcdFencedCreateRequest("/sp/xa/decisions/g", "v", &fence),
            R"j({"compare":[{"key":"L3NwL3Byb3hpZXMvcDE=","result":"EQUAL","target":"LEASE","lease":"7587"},)j"
            R"j({"key":"L3NwL3hhL2RlY2lzaW9ucy9n","result":"EQUAL","target":"CREATE","create_revision":"0"}],)j"
            R"j("success":[{"request_put":{"key":"L3NwL3hhL2RlY2lzaW9ucy9n","value":"dg=="}}],)j"
            R"j("failure":[{"request_range":{"key":"L3NwL3hhL2RlY2lzaW9ucy9n"}}]})j");
  // Unfenced (recovery's rollback record): only the absence.
  EXPECT_EQ(etcdFencedCreateRequest("/sp/xa/decisions/g", "v", nullptr),
            R"j({"compare":[{"key":"L3NwL3hhL2RlY2lzaW9ucy9n","result":"EQUAL","target":"CREATE","create_revision":"0"}],)j"
            R"j("success":[{"request_put":{"key":"L3NwL3hhL2RlY2lzaW9ucy9n","value":"dg=="}}],)j"
            R"j("failure":[{"request_range":{"key":"L3NwL3hhL2RlY2lzaW9ucy9n"}}]})j");
}

}  // namespace
}  // namespace sp::coord
