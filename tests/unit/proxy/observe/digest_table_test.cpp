// Query digests: accumulation, the LRU bound and its eviction count, merging
// the workers' tables, and the slow-query log's JSON line.
#include <gtest/gtest.h>

#include <vector>

#include "proxy/observe/digest_table.hpp"
#include "proxy/net/http_request.hpp"
#include "proxy/observe/slow_log.hpp"

namespace sp::proxy {
namespace {

TEST(DigestTable, AccumulatesPerText) {
  DigestTable t(10);
  t.record("SELECT ?", false, 1, 1, 100, 1000);
  t.record("SELECT ?", true, 0, 1, 300, 2000);
  t.record("SELECT * FROM msg WHERE conv_id IN ( ? , ? )", false, 4, 2, 50, 1500);
  auto rows = t.snapshot();
  ASSERT_EQ(rows.size(), 2u);
  const DigestStats& d = rows[1].text == "SELECT ?" ? rows[1] : rows[0];
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.errors, 1u);
  EXPECT_EQ(d.rows, 1u);
  EXPECT_EQ(d.total_us, 400u);
  EXPECT_EQ(d.max_us, 300u);
  EXPECT_EQ(d.first_seen_ms, 1000);
  EXPECT_EQ(d.last_seen_ms, 2000);
}

TEST(DigestTable, PercentilesFromTimeBuckets) {
  DigestTable t(4);
  for (int i = 0; i < 98; ++i) t.record("q", false, 0, 1, 80, 1);  // <= 100 us
  t.record("q", false, 0, 1, 3000, 1);                             // (2500, 5000]
  t.record("q", false, 0, 1, 40000, 1);                            // (25000, 50000], the max
  auto d = t.snapshot().at(0);
  EXPECT_EQ(d.percentileUs(0.5), 100u);    // the upper bound of the first bucket
  EXPECT_EQ(d.percentileUs(0.99), 5000u);  // the 99th execution is in (2500, 5000]
  EXPECT_EQ(d.percentileUs(1.0), 40000u);  // capped at max_us
  DigestStats merged = d;
  merged.add(d);
  EXPECT_EQ(merged.percentileUs(0.99), 5000u);
  EXPECT_EQ(DigestStats{}.percentileUs(0.5), 0u);
}

TEST(DigestTable, ScatterShardTimes) {
  DigestTable t(4);
  const std::vector<ShardTiming> first = {{"00", "db0", 1000, 3}, {"01", "db1", 9000, 4}, {"02", "db0", 2000, 1}};
  // The same shards in another order (a second plan of the same text): found by name.
  const std::vector<ShardTiming> second = {{"02", "db0", 30000, 1}, {"00", "db0", 3000, 3}, {"01", "db1", 1000, 4}};
  t.record("SELECT COUNT ( * ) FROM msg", false, 1, 3, 9500, 1, first);
  t.record("SELECT COUNT ( * ) FROM msg", false, 1, 3, 31000, 2, second);
  t.record("SELECT ?", false, 1, 1, 100, 3);  // not a scatter: no shard times
  auto rows = t.snapshot();
  ASSERT_EQ(rows.size(), 2u);
  const DigestStats& plain = rows[0];
  EXPECT_EQ(plain.scatters, 0u);
  EXPECT_TRUE(plain.shard_stats.empty());
  EXPECT_EQ(plain.slowestShard(), nullptr);
  const DigestStats& d = rows[1];
  EXPECT_EQ(d.scatters, 2u);
  ASSERT_EQ(d.shard_stats.size(), 3u);
  EXPECT_EQ(d.shard_stats[0].shard, "00");
  EXPECT_EQ(d.shard_stats[0].count, 2u);
  EXPECT_EQ(d.shard_stats[0].total_us, 4000u);
  EXPECT_EQ(d.shard_stats[0].max_us, 3000u);
  EXPECT_EQ(d.shard_stats[1].slowest, 1u);  // 01 answered last the first time
  EXPECT_EQ(d.shard_stats[2].slowest, 1u);  // 02 the second time
  ASSERT_NE(d.slowestShard(), nullptr);
  EXPECT_EQ(d.slowestShard()->shard, "02");  // average 16 ms
  EXPECT_EQ(d.slowest_shard_max_us, 30000u);
  EXPECT_EQ(d.slowestShardPercentileUs(0.5), 10000u);   // 9 ms is in (5000, 10000]
  EXPECT_EQ(d.slowestShardPercentileUs(0.99), 30000u);  // (25000, 50000], capped at the max
  // Another worker's statistics of the same text add up shard by shard.
  DigestStats merged = d;
  merged.add(d);
  EXPECT_EQ(merged.scatters, 4u);
  ASSERT_EQ(merged.shard_stats.size(), 3u);
  EXPECT_EQ(merged.shard_stats[2].total_us, 64000u);
  EXPECT_EQ(merged.shard_stats[2].slowest, 2u);
}

TEST(DigestTable, EvictsLeastRecentlySeenAndCounts) {
  DigestTable t(2);
  t.record("a", false, 0, 1, 1, 1);
  t.record("b", false, 0, 1, 1, 2);
  t.record("a", false, 0, 1, 1, 3);  // a is now the most recent
  t.record("c", false, 0, 1, 1, 4);  // evicts b
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.evictions(), 1u);
  auto rows = t.snapshot();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].text, "c");
  EXPECT_EQ(rows[1].text, "a");
  EXPECT_EQ(rows[1].count, 2u);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.snapshot().empty());
}

TEST(DigestTable, OffWhenCapacityZeroAndLongTextsCut) {
  DigestTable off(0);
  off.record("a", false, 0, 1, 1, 1);
  EXPECT_EQ(off.size(), 0u);
  DigestTable t(4);
  std::string long_text(DigestTable::kMaxTextBytes + 100, 'x');
  t.record(long_text, false, 0, 1, 1, 1);
  t.record(long_text + "y", false, 0, 1, 1, 1);
  auto rows = t.snapshot();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].text.size(), DigestTable::kMaxTextBytes);
  EXPECT_TRUE(rows[0].text.ends_with("..."));
  EXPECT_EQ(rows[0].count, 2u);
}

TEST(MergeDigests, SumsWorkersSortsByTotalTimeAndLimits) {
  DigestStats a{"a", 1, 0, 1, 1, 100, 100, 50, 50};
  DigestStats b{"b", 1, 1, 0, 1, 500, 500, 10, 10};
  DigestStats a2{"a", 2, 0, 2, 2, 600, 400, 20, 90};
  auto merged = mergeDigests({{a, b}, {a2}}, 0);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].text, "a");
  EXPECT_EQ(merged[0].count, 3u);
  EXPECT_EQ(merged[0].total_us, 700u);
  EXPECT_EQ(merged[0].max_us, 400u);
  EXPECT_EQ(merged[0].first_seen_ms, 20);
  EXPECT_EQ(merged[0].last_seen_ms, 90);
  EXPECT_EQ(merged[1].text, "b");
  auto top = mergeDigests({{a, b}, {a2}}, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].text, "a");
}

TEST(SlowLogLine, ExactJson) {
  SlowQueryEntry e;
  e.time_ms = 1764590400123;
  e.user = "app";
  e.client = "127.0.0.1:5000";
  e.connection_id = 7;
  e.plan = "scatter";
  e.table = "msg";
  e.digest = "SELECT COUNT ( * ) FROM msg";
  e.statement = "SELECT COUNT(*) FROM msg WHERE body = \"a\\b\"\n\x01";
  e.backends = {"db0", "db1"};
  e.shards = {{"00", "db0", 1500, 3}, {"01", "db1", 250, 0}};
  e.total_ms = 2.5;
  e.rows = 1;
  EXPECT_EQ(slowLogLine(e),
            "{\"time\":\"2025-12-01T12:00:00.123Z\",\"user\":\"app\",\"client\":\"127.0.0.1:5000\","
            "\"connection_id\":7,\"plan\":\"scatter\",\"table\":\"msg\",\"backends\":[\"db0\",\"db1\"],"
            "\"total_ms\":2.500,\"rows\":1,\"error\":null,\"digest\":\"SELECT COUNT ( * ) FROM msg\","
            "\"statement\":\"SELECT COUNT(*) FROM msg WHERE body = \\\"a\\\\b\\\"\\n\\u0001\","
            "\"shards\":[{\"shard\":\"00\",\"backend\":\"db0\",\"ms\":1.500,\"rows\":3},"
            "{\"shard\":\"01\",\"backend\":\"db1\",\"ms\":0.250,\"rows\":0}]}\n");
}

TEST(SlowLogLine, InvalidUtf8IsEscaped) {
  std::string out;
  appendJsonString(out, std::string("a\xff" "b\xc3\xa9", 5));
  EXPECT_EQ(out, "\"a\\u00ffb\xc3\xa9\"");
}

TEST(HttpRequestHead, ParsesAndRejects) {
  auto r = parseHttpRequestHead("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/metrics");
  EXPECT_EQ(parseHttpRequestHead("GET /metrics HTTP/2.0\r\n\r\n").error(), 505);
  EXPECT_EQ(parseHttpRequestHead("GET metrics HTTP/1.1\r\n\r\n").error(), 400);
  EXPECT_EQ(parseHttpRequestHead("get /metrics HTTP/1.1\r\n\r\n").error(), 400);
  EXPECT_EQ(parseHttpRequestHead("GET  /metrics HTTP/1.1\r\n\r\n").error(), 400);
  EXPECT_EQ(parseHttpRequestHead("\x16\x03\x01").error(), 400);
}

TEST(HttpResponse, HasLengthAndCloses) {
  EXPECT_EQ(httpResponse(404, "text/plain", "no\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n");
  EXPECT_EQ(httpResponse(200, "text/plain", "abc", true),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace sp::proxy
