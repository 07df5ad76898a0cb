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


// ---------------------------------------------------------------- prepared statements

// Captured from MariaDB 10.11: PREPARE_OK for 1 column / 2 params, a `?`
// definition, and the CONCAT(?, ?) column definition.
const char* kPrepareOk1Col2Params = "00 03000000 0100 0200 00 0000";
const char* kParamDef = "03646566000000013f000c3f0000000000068000000000";
const char* kConcatColumn = "036465660000000c434f4e434154283f2c203f29000c3f0000000000fd8000270000";

TEST(ResponseTracker, PrepareClassicEof) {
  ResponseTracker t(ResponseKind::kPrepare, kClassic);
  run(t, {{kPrepareOk1Col2Params, Ev::kPrepareOk},
          {kParamDef, Ev::kParamDef},
          {kParamDef, Ev::kParamDef},
          {"fe 0000 0200", Ev::kParamsEof},
          {kConcatColumn, Ev::kColumnDef},
          {"fe 0000 0200", Ev::kColumnsEof}});
  EXPECT_EQ(t.prepareOk(), (StmtPrepareOk{3, 1, 2, 0, std::nullopt}));
  EXPECT_EQ(t.statusFlags(), status::kAutocommit);
}

TEST(ResponseTracker, PrepareDeprecateEof) {
  ResponseTracker t(ResponseKind::kPrepare, kDeprecate);
  run(t, {{kPrepareOk1Col2Params, Ev::kPrepareOk},
          {kParamDef, Ev::kParamDef},
          {kParamDef, Ev::kParamDef},
          {kConcatColumn, Ev::kColumnDef}});
}

TEST(ResponseTracker, PrepareOnlyParamsOrOnlyColumnsOrNothing) {
  ResponseTracker params_only(ResponseKind::kPrepare, kClassic);
  run(params_only, {{"00 07000000 0000 0100 00 0000", Ev::kPrepareOk},
                    {kParamDef, Ev::kParamDef},
                    {"fe 0000 0200", Ev::kParamsEof}});
  ResponseTracker columns_only(ResponseKind::kPrepare, kClassic);
  run(columns_only, {{"00 07000000 0100 0000 00 0000", Ev::kPrepareOk},
                     {kConcatColumn, Ev::kColumnDef},
                     {"fe 0000 0200", Ev::kColumnsEof}});
  ResponseTracker nothing(ResponseKind::kPrepare, kClassic);
  run(nothing, {{"00 06000000 0000 0000 00 0100", Ev::kPrepareOk}});
  EXPECT_EQ(nothing.warnings(), 1);
  // MySQL 8 optional metadata: metadata_follows 0 means no definitions at all.
  ResponseTracker no_metadata(ResponseKind::kPrepare, kDeprecate);
  run(no_metadata, {{"00 07000000 0100 0100 00 0000 00", Ev::kPrepareOk}});
}

TEST(ResponseTracker, PrepareErr) {
  ResponseTracker t(ResponseKind::kPrepare, kClassic);
  run(t, {{kErr, Ev::kErr}});
}

TEST(ResponseTracker, PrepareMalformed) {
  {
    ResponseTracker t(ResponseKind::kPrepare, kClassic);  // an OK packet is not a PREPARE_OK
    EXPECT_FALSE(t.onPacket(hex("00 00 00 0200 0000")).has_value());
  }
  {
    ResponseTracker t(ResponseKind::kPrepare, kClassic);  // the params EOF is missing
    ASSERT_TRUE(t.onPacket(hex("00 07000000 0100 0100 00 0000")).has_value());
    ASSERT_TRUE(t.onPacket(hex(kParamDef)).has_value());
    EXPECT_FALSE(t.onPacket(hex(kConcatColumn)).has_value());
  }
  {
    ResponseTracker t(ResponseKind::kPrepare, kDeprecate);  // nothing follows the last column
    ASSERT_TRUE(t.onPacket(hex("00 07000000 0100 0000 00 0000")).has_value());
    ASSERT_TRUE(t.onPacket(hex(kConcatColumn)).has_value());
    ASSERT_TRUE(t.done());
    EXPECT_FALSE(t.onPacket(hex(kDeprecateEofEnd)).has_value());
  }
}

TEST(ResponseTracker, ExecuteWithCursorEndsAfterColumns) {
  // Captured: status 0x0062 = CURSOR_EXISTS | NO_INDEX_USED | AUTOCOMMIT.
  ResponseTracker classic(ResponseKind::kCursorExecute, kClassic);
  run(classic, {{kColumnCount1, Ev::kColumnCount}, {kColumnId, Ev::kColumnDef}, {"fe 0000 6200", Ev::kColumnsEof}});
  EXPECT_TRUE(classic.statusFlags() & status::kCursorExists);
  ResponseTracker deprecate(ResponseKind::kCursorExecute, kDeprecate);
  run(deprecate, {{kColumnCount1, Ev::kColumnCount}, {kColumnId, Ev::kColumnDef}, {"fe 00 00 6200 0000", Ev::kRowsEnd}});
  EXPECT_TRUE(deprecate.statusFlags() & status::kCursorExists);
}

TEST(ResponseTracker, CursorStatusOfAQueryDoesNotEndItsResultSet) {
  // CALL of a procedure that opened a cursor and then returns `SELECT x`: the
  // column EOF carries CURSOR_EXISTS, yet the rows follow (before, the proxy
  // took the response as complete and the client waited forever).
  ResponseTracker t(ResponseKind::kQuery, kClassic);
  run(t, {{kColumnCount1, Ev::kColumnCount}, {kColumnId, Ev::kColumnDef}, {"fe 0000 4a00", Ev::kColumnsEof},
          {"01 31", Ev::kRow}, {"fe 0000 0a00", Ev::kRowsEnd}, {"00 00 00 0200 0000", Ev::kOk}});
  EXPECT_TRUE(t.done());
}

TEST(ResponseTracker, KindOfAnExecuteDependsOnItsCursorFlag) {
  EXPECT_EQ(responseKindOf(hex("17 01000000 00 01000000")), ResponseKind::kQuery);
  EXPECT_EQ(responseKindOf(hex("17 01000000 01 01000000")), ResponseKind::kCursorExecute);
  EXPECT_EQ(responseKindOf(hex("16 53454c454354")), ResponseKind::kPrepare);
  EXPECT_EQ(responseKindOf(hex("03 53454c454354")), ResponseKind::kQuery);
}

TEST(ResponseTracker, Fetch) {
  // Captured: two binary rows, then EOF with CURSOR_EXISTS (more rows remain).
  ResponseTracker t(ResponseKind::kFetch, kClassic);
  run(t, {{"00 18 02000000", Ev::kRow}, {"00 00 03000000 07e80701010a0000 00", Ev::kRow}, {"fe 0000 4200", Ev::kRowsEnd}});
  EXPECT_FALSE(t.statusFlags() & status::kLastRowSent);
  ResponseTracker last(ResponseKind::kFetch, kDeprecate);
  run(last, {{"fe 00 00 8200 0000", Ev::kRowsEnd}});
  EXPECT_TRUE(last.statusFlags() & status::kLastRowSent);
  ResponseTracker err(ResponseKind::kFetch, kClassic);
  run(err, {{kErr, Ev::kErr}});
}

TEST(ResponseTracker, NoResponse) {
  ResponseTracker t(ResponseKind::kNone, kClassic);
  EXPECT_TRUE(t.done());
  EXPECT_FALSE(t.onPacket(hex("00 00 00 0200 0000")).has_value());
}

TEST(ResponseTracker, KindOfCommand) {
  EXPECT_EQ(responseKindOf(Command::kQuery), ResponseKind::kQuery);
  EXPECT_EQ(responseKindOf(Command::kStmtExecute), ResponseKind::kQuery);
  EXPECT_EQ(responseKindOf(Command::kStmtReset), ResponseKind::kQuery);
  EXPECT_EQ(responseKindOf(Command::kStmtPrepare), ResponseKind::kPrepare);
  EXPECT_EQ(responseKindOf(Command::kStmtFetch), ResponseKind::kFetch);
  EXPECT_EQ(responseKindOf(Command::kStmtClose), ResponseKind::kNone);
  EXPECT_EQ(responseKindOf(Command::kStmtSendLongData), ResponseKind::kNone);
  EXPECT_EQ(responseKindOf(Command::kQuit), ResponseKind::kNone);
  EXPECT_EQ(responseKindOf(Command::kFieldList), ResponseKind::kFieldList);
  EXPECT_EQ(responseKindOf(Command::kStatistics), ResponseKind::kStatistics);
}

}  // namespace
}  // namespace sp::protocol
