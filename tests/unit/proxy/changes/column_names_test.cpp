// Column names from information_schema when the binary log has none
// (proxy/changes/column_names.hpp): which cached names fit a TABLE_MAP's
// column types, and when the cache is used, refreshed, or the event refused.
#include <gtest/gtest.h>

#include "protocol/constants.hpp"
#include "proxy/changes/column_names.hpp"

namespace sp::proxy::changes {
namespace {

using protocol::ColumnType;

uint8_t t(ColumnType type) { return static_cast<uint8_t>(type); }

// msg's columns (scripts/schema_ddl.sql) as information_schema gives them and as a TABLE_MAP logs them.
TableColumns msgColumns() {
  return {{"conv_id", "seq", "msg_id", "sender_uid", "msg_type", "content", "status", "created_at"},
          {"bigint", "bigint", "bigint", "bigint", "tinyint", "varbinary", "tinyint", "datetime"}};
}
const std::vector<uint8_t> kMsgTypes = {t(ColumnType::kLongLong), t(ColumnType::kLongLong), t(ColumnType::kLongLong),
                                        t(ColumnType::kLongLong), t(ColumnType::kTiny),     t(ColumnType::kVarchar),
                                        t(ColumnType::kTiny),     t(ColumnType::kDateTime2)};

TEST(ColumnNames, TypesAgreeByFamily) {
  struct Case {
    const char* data_type;
    ColumnType binlog;
    bool agrees;
  };
  const Case cases[] = {
      {"bigint", ColumnType::kLongLong, true},   {"bigint", ColumnType::kLong, false},
      {"int", ColumnType::kLong, true},          {"int", ColumnType::kLongLong, false},
      {"datetime", ColumnType::kDateTime2, true}, {"datetime", ColumnType::kDateTime, true},
      {"datetime", ColumnType::kTimestamp2, false}, {"timestamp", ColumnType::kTimestamp2, true},
      {"date", ColumnType::kDate, true},         {"time", ColumnType::kTime2, true},
      {"varbinary", ColumnType::kVarchar, true}, {"varchar", ColumnType::kBlob, false},
      {"enum", ColumnType::kString, true},       {"char", ColumnType::kString, true},
      {"text", ColumnType::kBlob, true},         {"json", ColumnType::kBlob, true},
      {"decimal", ColumnType::kNewDecimal, true}, {"decimal", ColumnType::kDouble, false},
      // A type the table does not know agrees with anything: the count still checks it.
      {"some_plugin_type", ColumnType::kGeometry, true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(typeAgrees(c.data_type, t(c.binlog)), c.agrees) << c.data_type << " / " << int(t(c.binlog));
  }
}

TEST(ColumnNames, ColumnsAgreeNeedsTheSameCountAndTypes) {
  EXPECT_TRUE(columnsAgree(msgColumns(), kMsgTypes));
  auto added = kMsgTypes;
  added.push_back(t(ColumnType::kLong));
  EXPECT_FALSE(columnsAgree(msgColumns(), added));  // ADD COLUMN after the names were read
  auto fewer = kMsgTypes;
  fewer.pop_back();
  EXPECT_FALSE(columnsAgree(msgColumns(), fewer));
  auto retyped = kMsgTypes;
  retyped[4] = t(ColumnType::kLong);  // msg_type TINYINT -> INT
  EXPECT_FALSE(columnsAgree(msgColumns(), retyped));
  EXPECT_FALSE(columnsAgree(TableColumns{}, kMsgTypes));
}

TEST(ColumnNames, CacheHitRefreshAndRefusal) {
  ColumnNameCache cache;
  // Nothing cached: read information_schema.
  EXPECT_EQ(cache.decide("im", "msg_00", kMsgTypes, false), ColumnsDecision::kRefresh);
  cache.store("im", "msg_00", msgColumns());
  // Cached and fitting: used, without another query.
  EXPECT_EQ(cache.decide("im", "msg_00", kMsgTypes, false), ColumnsDecision::kUse);
  EXPECT_EQ(cache.find("im", "msg_00")->names.front(), "conv_id");
  // Per physical table: another table, or the same name in another schema, is not a hit.
  EXPECT_EQ(cache.decide("im", "msg_01", kMsgTypes, false), ColumnsDecision::kRefresh);
  EXPECT_EQ(cache.decide("other", "msg_00", kMsgTypes, false), ColumnsDecision::kRefresh);
  // A schema change: the event has a column more than the cache: refresh...
  auto added = kMsgTypes;
  added.push_back(t(ColumnType::kLong));
  EXPECT_EQ(cache.decide("im", "msg_00", added, false), ColumnsDecision::kRefresh);
  // ... and after the refresh it fits: used.
  auto altered = msgColumns();
  altered.names.push_back("extra");
  altered.data_types.push_back("int");
  cache.store("im", "msg_00", altered);
  EXPECT_EQ(cache.decide("im", "msg_00", added, true), ColumnsDecision::kUse);
  // An event of the old schema read after the refresh (a backlog from before
  // the ALTER): re-read, and when it still does not fit, refused: never names
  // put on the wrong values.
  EXPECT_EQ(cache.decide("im", "msg_00", kMsgTypes, false), ColumnsDecision::kRefresh);
  EXPECT_EQ(cache.decide("im", "msg_00", kMsgTypes, true), ColumnsDecision::kRefuse);
}

TEST(ColumnNames, QueryQuotesNothingFromTheLog) {
  // Schema and table names from the binary log go in as hex literals (bytewise, exact).
  EXPECT_EQ(columnsQuery("im", "a'b"),
            "SELECT COLUMN_NAME, LOWER(DATA_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = X'696d' "
            "AND TABLE_NAME = X'612762' ORDER BY ORDINAL_POSITION");
}

TEST(ColumnNames, RefusalSaysWhatDisagrees) {
  auto text = columnsMismatchMessage("db0", "r1", "im", "msg_00", nullptr, kMsgTypes);
  EXPECT_NE(text.find("binlog_row_metadata=MINIMAL"), std::string::npos) << text;
  EXPECT_NE(text.find("0 columns there, 8 in the event"), std::string::npos) << text;
  EXPECT_NE(text.find("binlog_row_metadata=FULL"), std::string::npos) << text;
}

}  // namespace
}  // namespace sp::proxy::changes
