// The session's own diagnostics area (proxy/session/session_diagnostics.hpp): what
// SHOW WARNINGS / SHOW ERRORS / SHOW COUNT(*) answer without a backend.
#include <gtest/gtest.h>

#include "parser/local_queries.hpp"
#include "proxy/session/session_diagnostics.hpp"

namespace sp::proxy {
namespace {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

Rows rowsOf(const LocalResult& r) { return r.rows; }

TEST(SessionDiagnostics, WarningsReadBackAreShownWithTheServersColumns) {
  SessionDiagnostics d;
  EXPECT_TRUE(d.onSuccess(2));
  d.setConditions({{"Warning", "1292", "Truncated incorrect INTEGER value: 'abc'"}, {"Note", "1051", "Unknown table"}});
  auto all = d.answer("SHOW WARNINGS");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->columns, (std::vector<std::string>{"Level", "Code", "Message"}));
  ASSERT_EQ(all->definitions.size(), 3u);
  EXPECT_EQ(all->definitions[1].type, protocol::ColumnType::kLong);
  EXPECT_EQ(rowsOf(*all), (Rows{{"Warning", "1292", "Truncated incorrect INTEGER value: 'abc'"},
                                {"Note", "1051", "Unknown table"}}));
  auto limited = d.answer("show warnings limit 1, 1;");
  ASSERT_TRUE(limited);
  EXPECT_EQ(rowsOf(*limited), (Rows{{"Note", "1051", "Unknown table"}}));
  auto count = d.answer("SHOW COUNT(*) WARNINGS");
  ASSERT_TRUE(count);
  EXPECT_EQ(count->columns, (std::vector<std::string>{"@@session.warning_count"}));
  EXPECT_EQ(rowsOf(*count), (Rows{{"2"}}));
  EXPECT_EQ(rowsOf(*d.answer("SHOW ERRORS")), Rows{});
  EXPECT_EQ(rowsOf(*d.answer("SHOW COUNT(*) ERRORS")), (Rows{{"0"}}));
}

TEST(SessionDiagnostics, AnInvalidConditionNumberAddsError1758) {
  SessionDiagnostics d;
  d.setConditions(Rows{{"Note", "1051", "Unknown table 'im.t'"}});
  EXPECT_FALSE(d.takeInvalidConditionNumber(1));
  EXPECT_TRUE(d.takeInvalidConditionNumber(5));
  EXPECT_TRUE(d.takeInvalidConditionNumber(0));
  ASSERT_EQ(d.conditions().size(), 3u);
  EXPECT_EQ(d.conditions()[1], (SessionDiagnostics::Condition{"Error", 1758, "Invalid condition number"}));
  EXPECT_FALSE(d.takeInvalidConditionNumber(3));  // the 1758s are conditions too
  EXPECT_EQ(parser::diagnosticsConditionNumber("GET DIAGNOSTICS CONDITION 5 @a = MESSAGE_TEXT"), 5u);
  EXPECT_EQ(parser::diagnosticsConditionNumber("get current diagnostics condition 0 @a = MYSQL_ERRNO;"), 0u);
  EXPECT_FALSE(parser::diagnosticsConditionNumber("GET DIAGNOSTICS CONDITION @n @a = MESSAGE_TEXT"));
  EXPECT_FALSE(parser::diagnosticsConditionNumber("GET DIAGNOSTICS @n = NUMBER"));
  EXPECT_FALSE(parser::diagnosticsConditionNumber("GET STACKED DIAGNOSTICS CONDITION 1 @a = MESSAGE_TEXT"));
}

TEST(SessionDiagnostics, AnErrorIsTheOnlyCondition) {
  SessionDiagnostics d;
  d.onError(protocol::ErrPacket{1062, "23000", "Duplicate entry '1' for key 'PRIMARY'"});
  EXPECT_EQ(rowsOf(*d.answer("SHOW ERRORS")), (Rows{{"Error", "1062", "Duplicate entry '1' for key 'PRIMARY'"}}));
  EXPECT_EQ(rowsOf(*d.answer("SHOW COUNT(*) WARNINGS")), (Rows{{"1"}}));
}

TEST(SessionDiagnostics, ASuccessWithoutWarningsEmptiesTheArea) {
  SessionDiagnostics d;
  d.onError(protocol::ErrPacket{1146, "42S02", "Table 'x' doesn't exist"});
  EXPECT_FALSE(d.onSuccess(0));
  EXPECT_EQ(rowsOf(*d.answer("SHOW WARNINGS")), Rows{});
}

TEST(SessionDiagnostics, MalformedRowsAreSkippedAndTheAreaIsBounded) {
  SessionDiagnostics d;
  d.onSuccess(100);
  Rows rows = {{"Warning", "x12", "bad code"}, {"Warning", std::nullopt, "null code"}, {"Warning", "1"}};
  for (int i = 0; i < 100; ++i) rows.push_back({"Note", std::to_string(i), "n"});
  d.setConditions(rows);
  EXPECT_EQ(d.conditions().size(), SessionDiagnostics::kMaxConditions);
  EXPECT_EQ(d.conditions().front().code, 0u);
  EXPECT_EQ(rowsOf(*d.answer("SHOW COUNT(*) WARNINGS")), (Rows{{"100"}}));  // the count, not what is kept
}

TEST(SessionDiagnostics, OtherStatementsAreNotAnswered) {
  SessionDiagnostics d;
  for (const char* sql : {"SHOW TABLES", "SHOW WARNINGS LIMIT x", "SHOW COUNT(*) WARNINGS LIMIT 1", "SELECT @@warning_count",
                          "SHOW WARNINGS; SELECT 1", "GET DIAGNOSTICS @n = NUMBER"}) {
    EXPECT_FALSE(d.answer(sql)) << sql;
  }
}

}  // namespace
}  // namespace sp::proxy
