#include "coord/etcd_messages.hpp"

#include <gtest/gtest.h>

#include "coord/fleet_records.hpp"

namespace sp::coord {
namespace {

// Answers of etcd 3.4.23's gateway, captured with curl.
const char* kRangeFound =
    R"({"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"},)"
    R"("kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"2","version":"1","value":"YmFy"}],"count":"1"})";
const char* kRangeEmpty =
    R"({"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"}})";
const char* kTxnFailed =
    R"({"header":{"cluster_id":"1","member_id":"2","revision":"3","raft_term":"2"},"responses":[{"response_range":)"
    R"({"header":{"revision":"3"},"kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"3","version":"2","value":"YmF6"}],"count":"1"}}]})";
const char* kTxnSucceeded =
    R"({"header":{"cluster_id":"1","member_id":"2","revision":"4","raft_term":"2"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"4"}}}]})";
const char* kGrant =
    R"({"header":{"cluster_id":"1","member_id":"2","revision":"2","raft_term":"2"},"ID":"4111120375197321992","TTL":"5"})";
const char* kKeepAlive =
    R"({"result":{"header":{"cluster_id":"1","member_id":"2","revision":"3","raft_term":"2"},"ID":"4111120375197321995","TTL":"5"}})";
const char* kWatchCreated = R"({"result":{"header":{"cluster_id":"1","member_id":"2","revision":"4","raft_term":"2"},"created":true}})";
const char* kWatchEvents =
    R"({"result":{"header":{"cluster_id":"1","member_id":"2","revision":"5","raft_term":"2"},"events":[)"
    R"({"kv":{"key":"Zm9v","create_revision":"2","mod_revision":"5","version":"3","value":"cXV4"}},)"
    R"({"type":"DELETE","kv":{"key":"Zm9v","mod_revision":"6"}}]}})";
const char* kWatchCompacted =
    R"({"result":{"header":{"revision":"9"},"canceled":true,"compact_revision":"7","cancel_reason":"mvcc: required revision has been compacted"}})";
const char* kGatewayError = R"({"error":"etcdserver: request timed out","code":14,"message":"etcdserver: request timed out"})";

TEST(EtcdMessages, RangeRequestsAreBase64WithPrefixEnd) {
  EXPECT_EQ(etcdRangeRequest("foo", false), R"({"key":"Zm9v"})");
  EXPECT_EQ(etcdRangeRequest("/a/", true), R"({"key":"L2Ev","range_end":"L2Ew"})");  // "/a/" .. "/a0"
  EXPECT_EQ(etcdRangeRequest("foo", false, true), R"({"key":"Zm9v","keys_only":true})");
}

TEST(EtcdMessages, PrefixEnd) {
  EXPECT_EQ(etcdPrefixEnd("abc"), "abd");
  EXPECT_EQ(etcdPrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(etcdPrefixEnd(""), std::string(1, '\0'));
}

TEST(EtcdMessages, CasPutComparesModRevisionOrAbsence) {
  EXPECT_EQ(etcdCasPutRequest("foo", 2, "baz"),
            R"({"compare":[{"key":"Zm9v","result":"EQUAL","target":"MOD","mod_revision":"2"}],)"
            R"("success":[{"request_put":{"key":"Zm9v","value":"YmF6"}}],"failure":[{"request_range":{"key":"Zm9v"}}]})");
  EXPECT_EQ(etcdCasPutRequest("foo", 0, "baz"),
            R"({"compare":[{"key":"Zm9v","result":"EQUAL","target":"CREATE","create_revision":"0"}],)"
            R"("success":[{"request_put":{"key":"Zm9v","value":"YmF6"}}],"failure":[{"request_range":{"key":"Zm9v"}}]})");
}

TEST(EtcdMessages, CasPutUnderALeaseAndGuardedDelete) {
  EXPECT_EQ(etcdCasPutRequest("foo", 0, "baz", nullptr, 9),
            R"({"compare":[{"key":"Zm9v","result":"EQUAL","target":"CREATE","create_revision":"0"}],)"
            R"("success":[{"request_put":{"key":"Zm9v","value":"YmF6","lease":"9"}}],"failure":[{"request_range":{"key":"Zm9v"}}]})");
  EXPECT_EQ(etcdGuardedDeleteRequest("foo", 12),
            R"({"compare":[{"key":"Zm9v","result":"EQUAL","target":"CREATE","create_revision":"12"}],)"
            R"("success":[{"request_delete_range":{"key":"Zm9v"}}]})");
}

TEST(EtcdMessages, PutLeaseAndWatchRequests) {
  EXPECT_EQ(etcdPutRequest("foo", "bar", 7), R"({"key":"Zm9v","value":"YmFy","lease":"7"})");
  EXPECT_EQ(etcdPutRequest("foo", "bar"), R"({"key":"Zm9v","value":"YmFy"})");
  EXPECT_EQ(etcdLeaseGrantRequest(5), R"({"TTL":"5"})");
  EXPECT_EQ(etcdLeaseKeepAliveRequest(42), R"({"ID":"42"})");
  EXPECT_EQ(etcdWatchCreateRequest("foo", false, 6), R"({"create_request":{"key":"Zm9v","start_revision":"6"}})");
}

TEST(EtcdMessages, ParsesRange) {
  auto r = parseEtcdRange(kRangeFound);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->header.revision, 2);
  EXPECT_EQ(r->header.member_id, 13668033151171901709ull);
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0].key, "foo");
  EXPECT_EQ(r->kvs[0].value, "bar");
  EXPECT_EQ(r->kvs[0].mod_revision, 2);
  EXPECT_EQ(r->kvs[0].version, 1);
  auto empty = parseEtcdRange(kRangeEmpty);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->kvs.empty());
}

TEST(EtcdMessages, ParsesTxnBothWays) {
  auto failed = parseEtcdTxn(kTxnFailed);
  ASSERT_TRUE(failed) << failed.error();
  EXPECT_FALSE(failed->succeeded);  // the gateway leaves "succeeded": false out
  ASSERT_EQ(failed->range_kvs.size(), 1u);
  EXPECT_EQ(failed->range_kvs[0].value, "baz");
  EXPECT_EQ(failed->range_kvs[0].mod_revision, 3);
  auto ok = parseEtcdTxn(kTxnSucceeded);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->succeeded);
  EXPECT_EQ(ok->header.revision, 4);
}

TEST(EtcdMessages, ParsesLeases) {
  auto g = parseEtcdLeaseGrant(kGrant);
  ASSERT_TRUE(g) << g.error();
  EXPECT_EQ(g->id, 4111120375197321992);
  EXPECT_EQ(g->ttl, 5);
  auto k = parseEtcdLeaseKeepAlive(kKeepAlive);
  ASSERT_TRUE(k) << k.error();
  EXPECT_EQ(k->ttl, 5);
  // An expired lease: the answer has no TTL.
  auto gone = parseEtcdLeaseKeepAlive(R"({"result":{"header":{"revision":"3"},"ID":"1"}})");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->ttl, 0);
}

TEST(EtcdMessages, ParsesWatchStream) {
  auto created = parseEtcdWatchLine(kWatchCreated);
  ASSERT_TRUE(created) << created.error();
  EXPECT_TRUE(created->created);
  auto events = parseEtcdWatchLine(kWatchEvents);
  ASSERT_TRUE(events) << events.error();
  ASSERT_EQ(events->events.size(), 2u);
  EXPECT_FALSE(events->events[0].is_delete);
  EXPECT_EQ(events->events[0].kv.value, "qux");
  EXPECT_EQ(events->events[0].kv.mod_revision, 5);
  EXPECT_TRUE(events->events[1].is_delete);
  auto compacted = parseEtcdWatchLine(kWatchCompacted);
  ASSERT_TRUE(compacted);
  EXPECT_TRUE(compacted->canceled);
  EXPECT_EQ(compacted->compact_revision, 7);
}

TEST(EtcdMessages, GatewayErrorsAndGarbage) {
  auto r = parseEtcdRange(kGatewayError);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "etcd error: etcdserver: request timed out");
  auto w = parseEtcdWatchLine(R"({"error":{"grpc_code":1,"http_code":408,"message":"context canceled"}})");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error(), "etcd error: context canceled");
  for (const char* bad : {"", "[]", "{", R"({"kvs":[{"key":"!!"}]})", R"({"kvs":[{"key":"Zm9v","version":"x"}]})",
                          R"({"kvs":[1]})"}) {
    EXPECT_FALSE(parseEtcdRange(bad)) << bad;
  }
}

TEST(FleetRecords, RoundTripAndKeys) {
  PublishedMap m{5, "abc", "version: 5\ntables: {}\n", "p1 admin:admin", "reload"};
  auto back = decodePublishedMap(encodePublishedMap(m));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->version, 5u);
  EXPECT_EQ(back->source, m.source);
  EXPECT_EQ(back->published_by, m.published_by);
  EXPECT_FALSE(decodePublishedMap(R"({"version":"5","source":"x"})"));
  EXPECT_FALSE(decodePublishedMap(R"({"version":5})"));
  MemberRecord r{"p2", "127.0.0.1:6034", 5, "abc", "2026-12-01T20:00:00.123Z", 17};
  auto rb = decodeMemberRecord(encodeMemberRecord(r));
  ASSERT_TRUE(rb);
  EXPECT_EQ(rb->map_revision, 17);
  EXPECT_EQ(rb->applied_at, r.applied_at);
  EXPECT_EQ(mapKey("/shardproxy/c1/"), "/shardproxy/c1/map");
  EXPECT_EQ(memberKey("/shardproxy/c1", "p2"), "/shardproxy/c1/proxies/p2");
}

}  // namespace
}  // namespace sp::coord
