// The response state machine, driven by scripted packet sequences.
#include "protocol/response_tracker.hpp"

#include <gtest/gtest.h>

#include "protocol/constants.hpp"
#include "protocol/packet.hpp"
#include "test_util.hpp"

namespace sp::protocol {
namespace {

using test::hex;
using Ev = ResponseEvent;

struct Step {
  const char* payload;
  Ev event;
};

// Feeds the script; the response must be complete exactly after the last step.
void run(ResponseTracker& t, const std::vector<Step>& script) {
  for (size_t i = 0; i < script.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_FALSE(t.done());
    Bytes p = hex(script[i].payload);
    auto e = t.onPacket(test::ExactBuffer(p).view());
    ASSERT_TRUE(e.has_value()) << toString(e.error());
    EXPECT_EQ(*e, script[i].event);
  }
  EXPECT_TRUE(t.done());
}

// SELECT id FROM t, as MariaDB sends it (column definition captured, see captured_test.cpp).
const char* kColumnCount1 = "01";
const char* kColumnId = "03646566056361706462017401740269640269640c3f000b000000030342000000";
const char* kRowAlice = "013105616c696365";
const char* kClassicEof = "fe 0000 2200";
const char* kClassicEofMore = "fe 0000 2a00";  // SERVER_MORE_RESULTS_EXIST
const char* kDeprecateEofEnd = "fe 00 00 2200 0000";
const char* kErr = "ff 7a04 23 3432533032 6e6f207461626c65";

constexpr uint32_t kClassic = cap::kProtocol41;
constexpr uint32_t kDeprecate = cap::kProtocol41 | cap::kDeprecateEof;

TEST(ResponseTracker, PlainOk) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  EXPECT_EQ(t.statusFlags(), 0);
  run(t, {{"00 03 05 0300 0100", Ev::kOk}});
  EXPECT_EQ(t.affectedRows(), 3u);
  EXPECT_EQ(t.lastInsertId(), 5u);
  EXPECT_EQ(t.statusFlags(), status::kInTrans | status::kAutocommit);
  EXPECT_EQ(t.warnings(), 1);
}

TEST(ResponseTracker, Err) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{kErr, Ev::kErr}});
}

TEST(ResponseTracker, ClassicResultSet) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {"fe 0000 0200", Ev::kColumnsEof},
          {kRowAlice, Ev::kRow},
          {"0132", Ev::kRow},
          {"fe 0100 2200", Ev::kRowsEnd}});
  EXPECT_EQ(t.statusFlags(), 0x0022);
  EXPECT_EQ(t.warnings(), 1);
}

TEST(ResponseTracker, DeprecateEofResultSet) {
  ResponseTracker t(ResponseKind::kQuery, kDeprecate);
  run(t, {{kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {kRowAlice, Ev::kRow},
          {kDeprecateEofEnd, Ev::kRowsEnd}});
  EXPECT_EQ(t.statusFlags(), 0x0022);
}

TEST(ResponseTracker, EmptyResultSet) {
  ResponseTracker t(ResponseKind::kQuery, kDeprecate);
  run(t, {{kColumnCount1, Ev::kColumnCount}, {kColumnId, Ev::kColumnDef}, {kDeprecateEofEnd, Ev::kRowsEnd}});
}

TEST(ResponseTracker, MultiResultsClassic) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {kClassicEof, Ev::kColumnsEof},
          {kRowAlice, Ev::kRow},
          {kClassicEofMore, Ev::kRowsEnd},
          {"00 01 00 0a00 0000", Ev::kOk},  // an UPDATE in the middle, more follows
          {kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {kClassicEof, Ev::kColumnsEof},
          {kClassicEof, Ev::kRowsEnd}});
}

TEST(ResponseTracker, MultiResultsDeprecateEof) {
  ResponseTracker t(ResponseKind::kQuery, kDeprecate);
  run(t, {{kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {"fe 00 00 0a00 0000", Ev::kRowsEnd},
          {"00 00 00 0a00 0000", Ev::kOk},
          {"00 00 00 0200 0000", Ev::kOk}});
}

TEST(ResponseTracker, ErrorAfterSomeResults) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{"00 00 00 0a00 0000", Ev::kOk}, {kErr, Ev::kErr}});
}

TEST(ResponseTracker, ErrorInsideRows) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{kColumnCount1, Ev::kColumnCount},
          {kColumnId, Ev::kColumnDef},
          {kClassicEof, Ev::kColumnsEof},
          {kRowAlice, Ev::kRow},
          {kErr, Ev::kErr}});
}

TEST(ResponseTracker, LocalInfileThenOk) {
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{"fb 2f746d702f78", Ev::kLocalInfile}, {"00 01 00 0200 0000", Ev::kOk}});
}

TEST(ResponseTracker, FieldListClassic) {
  ResponseTracker t(ResponseKind::kFieldList, kClassic);
  std::string with_default = std::string(kColumnId) + "0130";
  run(t, {{with_default.c_str(), Ev::kColumnDef}, {kColumnId, Ev::kColumnDef}, {"fe 0000 0200", Ev::kRowsEnd}});
  EXPECT_EQ(t.statusFlags(), status::kAutocommit);
}

TEST(ResponseTracker, FieldListDeprecateEof) {
  ResponseTracker t(ResponseKind::kFieldList, kDeprecate);
  run(t, {{kColumnId, Ev::kColumnDef}, {"fe 00 00 0200 0000", Ev::kRowsEnd}});
}

TEST(ResponseTracker, FieldListError) {
  ResponseTracker t(ResponseKind::kFieldList, kClassic);
  run(t, {{kErr, Ev::kErr}});
}

TEST(ResponseTracker, Statistics) {
  ResponseTracker t(ResponseKind::kStatistics, kClassic);
  run(t, {{"557074696d653a2031", Ev::kStatistics}});
  ResponseTracker e(ResponseKind::kStatistics, kClassic);
  run(e, {{kErr, Ev::kErr}});
}

TEST(ResponseTracker, MariadbSkippedMetadata) {
  ResponseTracker t(ResponseKind::kQuery, kClassic, mariadb_cap::kCacheMetadata);
  run(t, {{"0100", Ev::kColumnCount}, {kClassicEof, Ev::kColumnsEof}, {kRowAlice, Ev::kRow}, {kClassicEof, Ev::kRowsEnd}});
  ResponseTracker d(ResponseKind::kQuery, kDeprecate, mariadb_cap::kCacheMetadata);
  run(d, {{"0100", Ev::kColumnCount}, {kRowAlice, Ev::kRow}, {kDeprecateEofEnd, Ev::kRowsEnd}});
  ResponseTracker m(ResponseKind::kQuery, kDeprecate, mariadb_cap::kCacheMetadata);
  run(m, {{"0101", Ev::kColumnCount}, {kColumnId, Ev::kColumnDef}, {kDeprecateEofEnd, Ev::kRowsEnd}});
}

TEST(ResponseTracker, LargeRowStartingWith0xfeIsARow) {
  // A text row whose first value is >= 2^24 bytes starts with 0xfe.
  Bytes row(kMaxPacketPayload + 9, 'v');
  row[0] = 0xfe;
  for (int i = 1; i < 9; ++i) row[i] = 0;
  row[1] = 0xff, row[2] = 0xff, row[3] = 0xff, row[4] = 0x00;
  for (uint32_t caps : {kClassic, kDeprecate}) {
    ResponseTracker t(ResponseKind::kQuery, caps);
    ASSERT_EQ(t.onPacket(hex(kColumnCount1)).value(), Ev::kColumnCount);
    ASSERT_EQ(t.onPacket(hex(kColumnId)).value(), Ev::kColumnDef);
    if (caps == kClassic) {
      ASSERT_EQ(t.onPacket(hex(kClassicEof)).value(), Ev::kColumnsEof);
    }
    EXPECT_EQ(t.onPacket(row).value(), Ev::kRow);
    EXPECT_FALSE(t.done());
  }
}

TEST(ResponseTracker, UnexpectedPackets) {
  {  // nothing may follow the end
    ResponseTracker t(ResponseKind::kQuery, kClassic);
    ASSERT_TRUE(t.onPacket(hex("00 00 00 0200 0000")).has_value());
    EXPECT_EQ(t.onPacket(hex("00 00 00 0200 0000")).error(), DecodeError::kProtocolValue);
  }
  {  // classic style needs the EOF after the columns
    ResponseTracker t(ResponseKind::kQuery, kClassic);
    ASSERT_TRUE(t.onPacket(hex(kColumnCount1)).has_value());
    ASSERT_TRUE(t.onPacket(hex(kColumnId)).has_value());
    EXPECT_EQ(t.onPacket(hex(kRowAlice)).error(), DecodeError::kProtocolValue);
  }
  {  // a malformed column definition
    ResponseTracker t(ResponseKind::kQuery, kClassic);
    ASSERT_TRUE(t.onPacket(hex(kColumnCount1)).has_value());
    EXPECT_FALSE(t.onPacket(hex("03646566")).has_value());
  }
  {  // empty payload, bad column count, truncated OK, truncated ERR
    ResponseTracker t(ResponseKind::kQuery, kClassic);
    EXPECT_FALSE(t.onPacket(ByteView{}).has_value());
    EXPECT_FALSE(t.onPacket(hex("0105")).has_value());
    EXPECT_FALSE(t.onPacket(hex("00 00")).has_value());
    EXPECT_FALSE(t.onPacket(hex("ff 00")).has_value());
    EXPECT_FALSE(t.done());
  }
  {  // a malformed end marker under DEPRECATE_EOF (an EOF packet is not an OK)
    ResponseTracker t(ResponseKind::kQuery, kDeprecate);
    ASSERT_TRUE(t.onPacket(hex(kColumnCount1)).has_value());
    ASSERT_TRUE(t.onPacket(hex(kColumnId)).has_value());
    EXPECT_FALSE(t.onPacket(hex("fe 00")).has_value());
  }
}

}  // namespace
}  // namespace sp::protocol
