// Prepared statements (mysql_stmt_* of libmariadb) through the proxy on the
// sharded tables msg (conv_id % 16) and tg_channel_message (CRC32 buckets,
// month partitions). Row placement is checked directly on the backends with
// an independent calculation (conv_id % 16 here, CRC32() by MariaDB itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "stmt_helpers.hpp"

namespace sp::drivers {
namespace {

const unsigned kBackendPorts[2] = {envPort("SP_DB0_PORT", 3307), envPort("SP_DB1_PORT", 3308)};
constexpr uint64_t kMaxKey = std::numeric_limits<uint64_t>::max();

std::string two(unsigned n) { return (n < 10 ? "0" : "") + std::to_string(n); }
// The layout of conf/shard_map.yaml, restated: msg_00..07 on db0, msg_08..15 on db1.
std::string msgPlace(uint64_t conv_id) {
  unsigned shard = unsigned(conv_id % 16);
  return std::string(shard < 8 ? "db0" : "db1") + ".msg_" + two(shard);
}
std::string allBytes(size_t size, unsigned salt) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = char((i * 7 + salt) & 0xff);
  return s;
}

class Prepared : public ::testing::Test {
 protected:
  void SetUp() override {
    bool ok = false;
    proxy_ = connectTo(kProxyPort, "app", "app_pw", "im", &ok);
    ASSERT_TRUE(ok) << "proxy on " << kProxyPort << ": " << mysql_error(proxy_.get());
    for (int i = 0; i < 2; ++i) {
      db_[i] = connectTo(kBackendPorts[i], "proxy", "proxy_pw", "im", &ok);
      ASSERT_TRUE(ok) << "backend on " << kBackendPorts[i] << ": " << mysql_error(db_[i].get());
    }
    std::random_device rd;
    // Below 2^53 so the DOUBLE and text forms of keys stay exact; a multiple of 16.
    base_ = ((uint64_t(rd()) << 16 | (rd() & 0xffff)) % (uint64_t(1) << 44)) * 16 + (uint64_t(1) << 50);
    seq_ = (uint64_t(rd()) << 20) | (rd() & 0xfffff);
  }
  void TearDown() override {
    for (const auto& [conv, seq] : msg_rows_) {
      unsigned shard = unsigned(conv % 16);
      direct(shard < 8 ? 0 : 1, "DELETE FROM msg_" + two(shard) + " WHERE conv_id = " + std::to_string(conv) +
                                    " AND seq = " + std::to_string(seq));
    }
    for (uint64_t peer : tg_peers_) {
      for (int i = 0; i < 2; ++i) {
        for (const char* s : i == 0 ? std::vector<const char*>{"s00", "s01"} : std::vector<const char*>{"s02", "s03"}) {
          direct(i, std::string("DELETE FROM tg_channel_message_") + s + " WHERE peer_id = " + std::to_string(peer));
        }
      }
    }
  }

  Rows direct(int backend, const std::string& sql) {
    std::string error;
    Rows r = textRows(db_[backend].get(), sql, &error);
    EXPECT_EQ(error, "") << sql;
    return r;
  }
  // Every physical msg table holding (conv_id, seq), as "dbN.msg_XX".
  std::vector<std::string> msgPlacesOf(uint64_t conv, uint64_t seq) {
    std::vector<std::string> places;
    for (unsigned b = 0; b < 2; ++b) {
      std::string sql;
      for (unsigned shard = b * 8; shard < b * 8 + 8; ++shard) {
        if (!sql.empty()) sql += " UNION ALL ";
        sql += "SELECT 'db" + std::to_string(b) + ".msg_" + two(shard) + "' FROM msg_" + two(shard) +
               " WHERE conv_id = " + std::to_string(conv) + " AND seq = " + std::to_string(seq);
      }
      for (const auto& row : direct(b, sql)) places.push_back(*row[0]);
    }
    return places;
  }
  // A prepared INSERT of one msg row; the key is bound as BIGINT UNSIGNED.
  void insertMsg(Stmt& insert, uint64_t conv, uint64_t seq, const std::string& content) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, conv, true)
        .num(MYSQL_TYPE_LONGLONG, seq, true)
        .num(MYSQL_TYPE_LONGLONG, seq + conv % 1000, true)
        .num(MYSQL_TYPE_LONG, int32_t(4242))
        .num(MYSQL_TYPE_TINY, int8_t(2))
        .longData(MYSQL_TYPE_BLOB, {content.substr(0, content.size() / 3), content.substr(content.size() / 3)})
        .num(MYSQL_TYPE_SHORT, int16_t(0))
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 3, 14, 15, 9, 26, 535897));
    msg_rows_.insert({conv, seq});
    ASSERT_TRUE(insert.execute(p)) << "conv_id " << conv << ": " << insert.error();
    EXPECT_EQ(insert.affected(), 1u);
  }
  static constexpr const char* kInsertMsg =
      "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

  Connection proxy_;
  Connection db_[2];
  uint64_t base_ = 0;
  uint64_t seq_ = 0;
  std::set<std::pair<uint64_t, uint64_t>> msg_rows_;
  std::set<uint64_t> tg_peers_;
};

TEST_F(Prepared, EveryParameterTypeRoundTrips) {
  const uint64_t conv = base_ + 3;
  Stmt insert(proxy_.get(), kInsertMsg);
  ASSERT_TRUE(insert.prepared()) << insert.error();
  insertMsg(insert, conv, seq_, "x");
  const std::string blob = allBytes(512, 1);
  const std::string text = "h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9F\x98\x80";
  auto bindAll = [&](Params& p) {
    p.num(MYSQL_TYPE_TINY, int8_t(-128))
        .num(MYSQL_TYPE_TINY, uint8_t(255), true)
        .num(MYSQL_TYPE_SHORT, int16_t(-32768))
        .num(MYSQL_TYPE_SHORT, uint16_t(65535), true)
        .num(MYSQL_TYPE_LONG, std::numeric_limits<int32_t>::min())
        .num(MYSQL_TYPE_LONG, uint32_t(4294967295u), true)
        .num(MYSQL_TYPE_LONGLONG, std::numeric_limits<int64_t>::min())
        .num(MYSQL_TYPE_LONGLONG, kMaxKey, true)
        .num(MYSQL_TYPE_FLOAT, 1.5f)
        .num(MYSQL_TYPE_DOUBLE, -2.25e10)
        .text(MYSQL_TYPE_NEWDECIMAL, "-12345678901234567890.123456789")
        .text(MYSQL_TYPE_VAR_STRING, text)
        .longData(MYSQL_TYPE_BLOB, {blob.substr(0, 100), blob.substr(100, 300), blob.substr(400)})
        .time(MYSQL_TYPE_DATE, makeTime(MYSQL_TIMESTAMP_DATE, 2025, 3, 1))
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 3, 14, 15, 9, 26, 535897))
        .time(MYSQL_TYPE_TIME, makeTime(MYSQL_TIMESTAMP_TIME, 0, 0, 0, 12, 34, 56, 789012, true))
        .null()
        .num(MYSQL_TYPE_LONGLONG, conv, true)
        .num(MYSQL_TYPE_LONGLONG, seq_, true);
  };
  const std::string select_list =
      "SELECT conv_id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM ";
  Stmt through(proxy_.get(), select_list + "msg WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(through.prepared()) << through.error();
  EXPECT_EQ(through.paramCount(), 19u);
  Params p;
  bindAll(p);
  ASSERT_TRUE(through.execute(p)) << through.error();
  ASSERT_EQ(through.rows().size(), 1u);
  const Row& row = through.rows()[0];
  ASSERT_EQ(row.size(), 18u);
  const std::vector<std::string> expected = {std::to_string(conv), "-128", "255", "-32768", "65535",
      "-2147483648", "4294967295", "-9223372036854775808", "18446744073709551615"};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(row[i].value_or("<null>"), expected[i]) << "column " << i;
  EXPECT_EQ(std::stod(row[9].value_or("0")), 1.5);
  EXPECT_EQ(std::stod(row[10].value_or("0")), -2.25e10);
  EXPECT_EQ(row[11].value_or("<null>"), "-12345678901234567890.123456789");
  EXPECT_EQ(row[12].value_or("<null>"), text);
  EXPECT_EQ(bytesDiff(row[13], blob), "") << "BLOB sent with mysql_stmt_send_long_data";
  EXPECT_EQ(row[14].value_or("<null>"), "2025-03-01");
  EXPECT_EQ(row[15].value_or("<null>"), "2025-03-14 15:09:26.535897");
  EXPECT_EQ(row[16].value_or("<null>"), "-12:34:56.789012");
  EXPECT_FALSE(row[17].has_value());

  // The same statement on the physical table, straight to the backend: identical row and column types.
  const int backend = msgPlace(conv).starts_with("db0") ? 0 : 1;
  Stmt straight(db_[backend].get(), select_list + "msg_" + two(conv % 16) + " WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(straight.prepared()) << straight.error();
  Params q;
  bindAll(q);
  ASSERT_TRUE(straight.execute(q)) << straight.error();
  ASSERT_EQ(straight.rows().size(), 1u);
  for (size_t i = 0; i < row.size(); ++i) {
    const auto& want = straight.rows()[0][i];
    if (row[i] != want) {
      ADD_FAILURE() << "column " << i << " differs from the backend's: " << bytesDiff(row[i], want.value_or("<null>"));
    }
  }
  EXPECT_EQ(straight.columnTypes(), through.columnTypes());
}

TEST_F(Prepared, KeyBoundAsEachIntegerTypeDoubleDecimalAndText) {
  Stmt insert(proxy_.get(), kInsertMsg);
  ASSERT_TRUE(insert.prepared()) << insert.error();
  Stmt select(proxy_.get(), "SELECT conv_id, msg_id FROM msg WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(select.prepared()) << select.error();
  struct Case {
    uint64_t conv;
    std::function<void(Params&)> bind;
  };
  const uint64_t b = base_;
  const std::vector<Case> cases = {
      {100, [](Params& p) { p.num(MYSQL_TYPE_TINY, int8_t(100)); }},
      {200, [](Params& p) { p.num(MYSQL_TYPE_TINY, uint8_t(200), true); }},
      {30001, [](Params& p) { p.num(MYSQL_TYPE_SHORT, int16_t(30001)); }},
      {60013, [](Params& p) { p.num(MYSQL_TYPE_SHORT, uint16_t(60013), true); }},
      {2000000006, [](Params& p) { p.num(MYSQL_TYPE_LONG, int32_t(2000000006)); }},
      {4000000010u, [](Params& p) { p.num(MYSQL_TYPE_LONG, uint32_t(4000000010u), true); }},
      {b + 5, [b](Params& p) { p.num(MYSQL_TYPE_LONGLONG, int64_t(b + 5)); }},
      {kMaxKey, [](Params& p) { p.num(MYSQL_TYPE_LONGLONG, kMaxKey, true); }},
      {b + 7, [b](Params& p) { p.num(MYSQL_TYPE_DOUBLE, double(b + 7)); }},
      {b + 9, [b](Params& p) { p.text(MYSQL_TYPE_NEWDECIMAL, std::to_string(b + 9)); }},
      {b + 12, [b](Params& p) { p.text(MYSQL_TYPE_VAR_STRING, std::to_string(b + 12)); }},
  };
  std::set<std::string> places;
  for (const auto& c : cases) {
    insertMsg(insert, c.conv, seq_, "k");
    EXPECT_EQ(msgPlacesOf(c.conv, seq_), std::vector<std::string>{msgPlace(c.conv)}) << c.conv;
    places.insert(msgPlace(c.conv));
    Params p;
    c.bind(p);
    p.num(MYSQL_TYPE_LONGLONG, seq_, true);
    ASSERT_TRUE(select.execute(p)) << c.conv << ": " << select.error();
    ASSERT_EQ(select.rows().size(), 1u) << c.conv;
    EXPECT_EQ(select.rows()[0][0], std::to_string(c.conv));
    EXPECT_EQ(select.rows()[0][1], std::to_string(seq_ + c.conv % 1000));
  }
  EXPECT_EQ(places.size(), cases.size());  // each case on its own shard
  // The maximum key bound as a DECIMAL (Java's BigInteger): exact, past 2^53.
  Params max_decimal;
  max_decimal.text(MYSQL_TYPE_NEWDECIMAL, "18446744073709551615").num(MYSQL_TYPE_LONGLONG, seq_, true);
  ASSERT_TRUE(select.execute(max_decimal)) << select.error();
  ASSERT_EQ(select.rows().size(), 1u);
  EXPECT_EQ(select.rows()[0][0], std::to_string(kMaxKey));
  // ... and as a string (how mysql2 binds a BigInt): MariaDB compares it as DECIMAL, exactly.
  Params max_string;
  max_string.text(MYSQL_TYPE_VAR_STRING, "18446744073709551615").num(MYSQL_TYPE_LONGLONG, seq_, true);
  ASSERT_TRUE(select.execute(max_string)) << select.error();
  ASSERT_EQ(select.rows().size(), 1u);
  EXPECT_EQ(select.rows()[0][0], std::to_string(kMaxKey));

  // Values that are no exact unsigned key: refused, and the statement stays usable.
  struct Refusal {
    std::function<void(Params&)> bind;
    unsigned errnum;
    const char* sqlstate;
  };
  const std::vector<Refusal> refusals = {
      {[](Params& p) { p.num(MYSQL_TYPE_LONGLONG, int64_t(-5)); }, 9104, "22003"},
      {[](Params& p) { p.num(MYSQL_TYPE_DOUBLE, 4.5); }, 9103, "22003"},
      {[](Params& p) { p.text(MYSQL_TYPE_VAR_STRING, "42abc"); }, 9103, "22003"},
      {[](Params& p) { p.text(MYSQL_TYPE_VAR_STRING, "1e3"); }, 9103, "22003"},
      {[](Params& p) { p.text(MYSQL_TYPE_VAR_STRING, "18446744073709551616"); }, 9103, "22003"},
  };
  for (const auto& r : refusals) {
    Params p;
    r.bind(p);
    p.num(MYSQL_TYPE_LONGLONG, seq_, true);
    EXPECT_FALSE(select.execute(p));
    EXPECT_EQ(select.errNo(), r.errnum) << select.error();
    EXPECT_EQ(select.sqlstate(), r.sqlstate);
    EXPECT_TRUE(select.error().starts_with("shardproxy: ")) << select.error();
    Params again;
    again.num(MYSQL_TYPE_LONGLONG, kMaxKey, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
    ASSERT_TRUE(select.execute(again)) << select.error();
    EXPECT_EQ(select.rows().size(), 1u);
  }
  // A NULL key matches no row: an empty result, not an error.
  Params null_key;
  null_key.null().num(MYSQL_TYPE_LONGLONG, seq_, true);
  ASSERT_TRUE(select.execute(null_key)) << select.error();
  EXPECT_TRUE(select.rows().empty());
}

TEST_F(Prepared, ReexecutionLandsOnEveryShardAndMaxKeyOnDb1) {
  Stmt insert(proxy_.get(), kInsertMsg);
  ASSERT_TRUE(insert.prepared()) << insert.error();
  std::vector<uint64_t> convs;
  for (uint64_t k = 0; k < 16; ++k) convs.push_back(base_ + (k * 5) % 16);  // shards in a scrambled order
  convs.push_back(kMaxKey);
  for (uint64_t conv : convs) insertMsg(insert, conv, seq_, allBytes(4096, unsigned(conv % 251)));

  std::set<std::string> places;
  for (uint64_t conv : convs) {
    auto found = msgPlacesOf(conv, seq_);
    EXPECT_EQ(found, std::vector<std::string>{msgPlace(conv)}) << conv;
    places.insert(msgPlace(conv));
  }
  EXPECT_EQ(places.size(), 16u);
  // The maximum key: 18446744073709551615 % 16 = 15, on db1 (read on db1's port itself).
  auto max_row = direct(1, "SELECT conv_id, LENGTH(content), created_at FROM msg_15 WHERE conv_id = 18446744073709551615"
                           " AND seq = " + std::to_string(seq_));
  ASSERT_EQ(max_row.size(), 1u);
  EXPECT_EQ(max_row[0][0], "18446744073709551615");
  EXPECT_EQ(max_row[0][1], "4096");
  EXPECT_EQ(max_row[0][2], "2025-03-14 15:09:26.535");  // DATETIME(3) truncates the bound microseconds

  Stmt read(proxy_.get(), "SELECT content, created_at, sender_uid FROM msg WHERE conv_id = ? AND seq = ?");
  Stmt update(proxy_.get(), "UPDATE msg SET status = ? WHERE conv_id = ? AND seq = ?");
  Stmt remove(proxy_.get(), "DELETE FROM msg WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(read.prepared() && update.prepared() && remove.prepared()) << read.error() << update.error();
  for (uint64_t conv : convs) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
    ASSERT_TRUE(read.execute(p)) << read.error();
    ASSERT_EQ(read.rows().size(), 1u) << conv;
    EXPECT_EQ(bytesDiff(read.rows()[0][0], allBytes(4096, unsigned(conv % 251))), "") << "content of " << conv;
    EXPECT_EQ(read.rows()[0][1], "2025-03-14 15:09:26.535");
    EXPECT_EQ(read.rows()[0][2], "4242");
    Params u;
    u.num(MYSQL_TYPE_TINY, uint8_t(conv % 200), true).num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
    ASSERT_TRUE(update.execute(u)) << update.error();
    EXPECT_EQ(update.affected(), conv % 200 == 0 ? 0u : 1u) << conv;  // status was 0
    const unsigned shard = unsigned(conv % 16);
    auto status = direct(shard < 8 ? 0 : 1, "SELECT status FROM msg_" + two(shard) + " WHERE conv_id = " +
                                                std::to_string(conv) + " AND seq = " + std::to_string(seq_));
    ASSERT_EQ(status.size(), 1u);
    EXPECT_EQ(status[0][0], std::to_string(conv % 200));
  }
  for (uint64_t conv : convs) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
    ASSERT_TRUE(remove.execute(p)) << remove.error();
    EXPECT_EQ(remove.affected(), 1u) << conv;
    EXPECT_TRUE(msgPlacesOf(conv, seq_).empty()) << conv;
  }
}


// tg_channel_message: peers chosen so that every shard gets two, placement
// predicted by MariaDB's own CRC32() and the bucket ranges of the map.
TEST_F(Prepared, TgChannelMessageWithDateBoundsOnEveryShard) {
  std::random_device rd;
  const uint64_t first = 1000000000 + rd() % 1000000000;
  auto buckets = direct(0, "SELECT seq, CRC32(CONCAT('channel:', seq)) % 64 FROM seq_" + std::to_string(first) + "_to_" +
                               std::to_string(first + 199));
  const char* kShard[4] = {"s00", "s01", "s02", "s03"};
  std::map<uint64_t, int> peers;  // peer -> shard index (buckets 0-15, 16-31, 32-47, 48-63)
  int per_shard[4] = {0, 0, 0, 0};
  for (const auto& row : buckets) {
    int shard = std::stoi(*row[1]) / 16;
    if (per_shard[shard] < 2) {
      ++per_shard[shard];
      peers[std::stoull(*row[0])] = shard;
    }
  }
  ASSERT_EQ(peers.size(), 8u);
  Stmt insert(proxy_.get(),
              "INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, edited_at, "
              "reply_to_msg_id, text_body, media_type, content_hash, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  ASSERT_TRUE(insert.prepared()) << insert.error();
  EXPECT_EQ(insert.paramCount(), 10u);
  const std::string body(100000, 'b');
  const std::string hash(64, 'f');
  for (const auto& [peer, shard] : peers) {
    tg_peers_.insert(peer);
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, int64_t(peer))
        .num(MYSQL_TYPE_LONGLONG, int64_t(77))
        .time(MYSQL_TYPE_DATE, makeTime(MYSQL_TIMESTAMP_DATE, 2025, 3, 1))
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 3, 14, 10, 0, 0, 250000))
        .null()
        .null()
        .longData(MYSQL_TYPE_STRING, {body.substr(0, 60000), body.substr(60000), "\xE2\x9C\x93"})
        .text(MYSQL_TYPE_VAR_STRING, "photo")
        .text(MYSQL_TYPE_STRING, hash)
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 3, 14, 10, 0, 1, 999999));
    ASSERT_TRUE(insert.execute(p)) << peer << ": " << insert.error();
    EXPECT_EQ(insert.affected(), 1u);
    // Exactly one copy, in the predicted shard's table on the predicted backend.
    std::vector<std::string> found;
    for (int s = 0; s < 4; ++s) {
      auto rows = direct(s / 2, std::string("SELECT message_month, LENGTH(text_body), edited_at FROM tg_channel_message_") +
                                    kShard[s] + " WHERE peer_id = " + std::to_string(peer));
      for (const auto& r : rows) {
        found.push_back(kShard[s]);
        EXPECT_EQ(r[0], "2025-03-01");
        EXPECT_EQ(r[1], "100003");
        EXPECT_FALSE(r[2].has_value());
      }
    }
    EXPECT_EQ(found, std::vector<std::string>{kShard[shard]}) << "peer " << peer;
  }

  Stmt by_month(proxy_.get(),
                "SELECT message_id, message_time, CHAR_LENGTH(text_body), media_type, reply_to_msg_id FROM tg_channel_message "
                "WHERE peer_id = ? AND message_month >= ? AND message_month <= ?");
  Stmt by_time(proxy_.get(), "SELECT COUNT(*), SUM(message_id), MAX(ingested_at) FROM tg_channel_message "
                             "WHERE peer_id = ? AND message_time >= ? AND message_time < ?");
  ASSERT_TRUE(by_month.prepared() && by_time.prepared()) << by_month.error() << by_time.error();
  auto date = [](unsigned y, unsigned m) { return makeTime(MYSQL_TIMESTAMP_DATE, y, m, 1); };
  for (const auto& [peer, shard] : peers) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, int64_t(peer)).time(MYSQL_TYPE_DATE, date(2025, 1)).time(MYSQL_TYPE_DATE, date(2025, 6));
    ASSERT_TRUE(by_month.execute(p)) << by_month.error();
    ASSERT_EQ(by_month.rows().size(), 1u) << peer;
    EXPECT_EQ(by_month.rows()[0], (Row{"77", "2025-03-14 10:00:00.250", "100001", "photo", std::nullopt}));
    Params later;  // months after the row's: nothing
    later.num(MYSQL_TYPE_LONGLONG, int64_t(peer)).time(MYSQL_TYPE_DATE, date(2025, 4)).time(MYSQL_TYPE_DATE, date(2025, 12));
    ASSERT_TRUE(by_month.execute(later)) << by_month.error();
    EXPECT_TRUE(by_month.rows().empty());
    Params t;
    t.num(MYSQL_TYPE_LONGLONG, int64_t(peer))
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 3, 14, 9, 0, 0))
        .time(MYSQL_TYPE_DATETIME, makeTime(MYSQL_TIMESTAMP_DATETIME, 2025, 4, 1, 0, 0, 0));
    ASSERT_TRUE(by_time.execute(t)) << by_time.error();
    ASSERT_EQ(by_time.rows().size(), 1u);
    EXPECT_EQ(by_time.rows()[0], (Row{"1", "77", "2025-03-14 10:00:01.999"}));
  }

  // Month refusals at execute; the statements keep working afterwards.
  const uint64_t peer = peers.begin()->first;
  struct Refusal {
    const char* what;
    std::function<void(Params&)> bind;
    unsigned errnum;
  };
  const std::vector<Refusal> refusals = {
      {"span over 12 months", [&](Params& p) { p.time(MYSQL_TYPE_DATE, date(2024, 1)).time(MYSQL_TYPE_DATE, date(2025, 6)); }, 9106},
      {"month as a number", [&](Params& p) { p.num(MYSQL_TYPE_LONG, int32_t(20250101)).time(MYSQL_TYPE_DATE, date(2025, 6)); }, 9107},
      {"month as loose text", [&](Params& p) { p.text(MYSQL_TYPE_VAR_STRING, "2025-1-1").time(MYSQL_TYPE_DATE, date(2025, 6)); }, 9107},
  };
  for (const auto& r : refusals) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, int64_t(peer));
    r.bind(p);
    EXPECT_FALSE(by_month.execute(p)) << r.what;
    EXPECT_EQ(by_month.errNo(), r.errnum) << r.what << ": " << by_month.error();
    Params ok;
    ok.num(MYSQL_TYPE_LONGLONG, int64_t(peer)).time(MYSQL_TYPE_DATE, date(2025, 3)).text(MYSQL_TYPE_VAR_STRING, "2025-03-01");
    ASSERT_TRUE(by_month.execute(ok)) << by_month.error();
    EXPECT_EQ(by_month.rows().size(), 1u);
  }
  // A NULL bound (message_month <= NULL) matches no row: an empty result, not an error.
  Params null_bound;
  null_bound.num(MYSQL_TYPE_LONGLONG, int64_t(peer)).time(MYSQL_TYPE_DATE, date(2025, 1)).null();
  ASSERT_TRUE(by_month.execute(null_bound)) << by_month.error();
  EXPECT_TRUE(by_month.rows().empty());
  Stmt unbounded(proxy_.get(), "SELECT message_id FROM tg_channel_message WHERE peer_id = ? AND message_month >= ?");
  ASSERT_TRUE(unbounded.prepared()) << unbounded.error();
  Params p;
  p.num(MYSQL_TYPE_LONGLONG, int64_t(peer)).time(MYSQL_TYPE_DATE, date(2025, 3));
  EXPECT_FALSE(unbounded.execute(p));
  EXPECT_EQ(unbounded.errNo(), 9105u) << unbounded.error();
  EXPECT_EQ(unbounded.sqlstate(), "42000");
}

// Statements the planner refuses at execute: the documented error, then the
// same statement and the session keep working.
TEST_F(Prepared, RefusedExecutesKeepStatementAndSessionUsable) {
  const uint64_t conv = base_ + 11;
  Stmt insert(proxy_.get(), kInsertMsg);
  ASSERT_TRUE(insert.prepared()) << insert.error();
  insertMsg(insert, conv, seq_, "refusals");
  Stmt read(proxy_.get(), "SELECT status FROM msg WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(read.prepared()) << read.error();
  auto readStatus = [&]() -> std::string {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
    if (!read.execute(p) || read.rows().size() != 1) return "<read failed: " + read.error() + ">";
    return read.rows()[0][0].value_or("<null>");
  };

  struct Case {
    const char* sql;
    unsigned errnum;
    const char* sqlstate;
  };
  const std::vector<Case> cases = {
      {"UPDATE msg SET status = ? WHERE (conv_id = ? OR 1 = 1) AND seq = 0", 9101, "42000"},
      {"UPDATE msg SET conv_id = ? WHERE conv_id = ? AND seq = 1", 9110, "42000"},
      {"DELETE FROM msg WHERE conv_id <> ? AND seq = ?", 9101, "42000"},
  };
  for (const auto& c : cases) {
    Stmt s(proxy_.get(), c.sql);
    ASSERT_TRUE(s.prepared()) << c.sql << ": " << s.error();
    for (int attempt = 0; attempt < 2; ++attempt) {
      Params p;
      p.num(MYSQL_TYPE_TINY, int8_t(9)).num(MYSQL_TYPE_LONGLONG, conv, true);
      EXPECT_FALSE(s.execute(p)) << c.sql;
      EXPECT_EQ(s.errNo(), c.errnum) << c.sql << ": " << s.error();
      EXPECT_EQ(s.sqlstate(), c.sqlstate) << c.sql;
      EXPECT_TRUE(s.error().starts_with("shardproxy: ")) << s.error();
      EXPECT_EQ(readStatus(), "0") << "after " << c.sql;  // nothing was changed anywhere
    }
  }
  // An INSERT whose key parameter is NULL.
  Params null_key;
  null_key.null().num(MYSQL_TYPE_LONGLONG, seq_, true).num(MYSQL_TYPE_LONGLONG, seq_, true)
      .num(MYSQL_TYPE_LONG, 1).num(MYSQL_TYPE_TINY, int8_t(1)).text(MYSQL_TYPE_BLOB, "n")
      .num(MYSQL_TYPE_TINY, int8_t(0)).null();
  EXPECT_FALSE(insert.execute(null_key));
  EXPECT_EQ(insert.errNo(), 9108u) << insert.error();

  // A cursor (COM_STMT_EXECUTE with a cursor flag) is refused with 1235; the session goes on.
  Stmt cursor(proxy_.get(), "SELECT seq FROM msg WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(cursor.prepared()) << cursor.error();
  unsigned long type = CURSOR_TYPE_READ_ONLY;
  ASSERT_EQ(mysql_stmt_attr_set(cursor.get(), STMT_ATTR_CURSOR_TYPE, &type), 0);
  Params p;
  p.num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
  EXPECT_FALSE(cursor.execute(p));
  EXPECT_EQ(cursor.errNo(), 1235u) << cursor.error();

  Stmt update(proxy_.get(), "UPDATE msg SET status = ? WHERE conv_id = ? AND seq = ?");
  ASSERT_TRUE(update.prepared()) << update.error();
  Params u;
  u.num(MYSQL_TYPE_TINY, int8_t(3)).num(MYSQL_TYPE_LONGLONG, conv, true).num(MYSQL_TYPE_LONGLONG, seq_, true);
  ASSERT_TRUE(update.execute(u)) << update.error();
  EXPECT_EQ(update.affected(), 1u);
  EXPECT_EQ(readStatus(), "3");
  auto text = textRows(proxy_.get(), "SELECT status FROM msg WHERE conv_id = " + std::to_string(conv) +
                                         " AND seq = " + std::to_string(seq_));
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0][0], "3");
}

// A table the map does not shard goes through the same machinery (default backend).
TEST_F(Prepared, UnshardedTableOnDefaultBackend) {
  const std::string table = "it_drv_plain_" + std::to_string(seq_);
  ASSERT_EQ(textRows(proxy_.get(), "CREATE TABLE " + table + " (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(20), d DATE)").size(), 0u);
  Stmt insert(proxy_.get(), "INSERT INTO " + table + " VALUES (?, ?, ?)");
  Stmt select(proxy_.get(), "SELECT v, d FROM " + table + " WHERE id = ?");
  ASSERT_TRUE(insert.prepared() && select.prepared()) << insert.error() << select.error();
  for (uint64_t id : {uint64_t(1), kMaxKey}) {
    Params p;
    p.num(MYSQL_TYPE_LONGLONG, id, true).text(MYSQL_TYPE_VAR_STRING, "v" + std::to_string(id % 7))
        .time(MYSQL_TYPE_DATE, makeTime(MYSQL_TIMESTAMP_DATE, 2024, 2, 29));
    ASSERT_TRUE(insert.execute(p)) << insert.error();
  }
  Params q;
  q.num(MYSQL_TYPE_LONGLONG, kMaxKey, true);
  ASSERT_TRUE(select.execute(q)) << select.error();
  EXPECT_EQ(select.rows(), (Rows{Row{"v" + std::to_string(kMaxKey % 7), "2024-02-29"}}));
  EXPECT_EQ(direct(0, "SELECT COUNT(*) FROM " + table), (Rows{Row{"2"}}));
  direct(0, "DROP TABLE " + table);
}

// Long data is forwarded as the client sent it (issue 30): parameters that
// each fit the server's max_allowed_packet (16 MiB here) but together do
// not, and one of 16 MiB, are stored as the server directly stores them.
TEST_F(Prepared, LongDataBeyondMaxAllowedPacketTogether) {
  const std::string table = "it_drv_long_" + std::to_string(seq_);
  direct(0, "CREATE TABLE " + table + " (id INT PRIMARY KEY, a LONGBLOB, b LONGBLOB, c LONGBLOB)");
  auto run = [&](MYSQL* conn, int id, const std::vector<size_t>& sizes) {
    Stmt insert(conn, "INSERT INTO " + table + " VALUES (?, ?, ?, ?)");
    EXPECT_TRUE(insert.prepared()) << insert.error();
    Params p;
    p.num(MYSQL_TYPE_LONG, int32_t(id));
    for (size_t i = 0; i < 3; ++i) {
      const size_t size = i < sizes.size() ? sizes[i] : 0;
      const std::string value = allBytes(size, static_cast<unsigned>(i + 1));  // the same bytes both ways
      // In pieces of 1 MiB, as drivers stream them.
      std::vector<std::string> pieces;
      for (size_t at = 0; at < value.size(); at += 1 << 20) pieces.push_back(value.substr(at, 1 << 20));
      if (pieces.empty()) pieces.push_back("");
      p.longData(MYSQL_TYPE_LONG_BLOB, pieces);
    }
    const bool ok = insert.execute(p);
    return ok ? std::string("ok") : std::to_string(insert.errNo()) + " " + insert.error();
  };
  const std::vector<std::vector<size_t>> cases = {{10u << 20, 10u << 20}, {8u << 20, 8u << 20, 8u << 20},
                                                  {16u << 20}};
  int id = 1;
  for (const auto& sizes : cases) {
    const std::string direct_outcome = run(db_[0].get(), id, sizes);
    const std::string proxy_outcome = run(proxy_.get(), id + 100, sizes);
    EXPECT_EQ(proxy_outcome, direct_outcome) << "parameter sizes " << sizes.size();
    if (direct_outcome == "ok") {
      const auto summary = [&](int row) {
        return direct(0, "SELECT LENGTH(a), LENGTH(b), LENGTH(c), MD5(a), MD5(b), MD5(c) FROM " + table +
                             " WHERE id = " + std::to_string(row));
      };
      // The same lengths and bytes as the row the server stored directly.
      EXPECT_EQ(summary(id + 100), summary(id));
      EXPECT_EQ(summary(id).size(), 1u);
    }
    ++id;
  }
  direct(0, "DROP TABLE " + table);
}

}  // namespace
}  // namespace sp::drivers
