// Session-state carry-over between multiplexed backend connections: what the
// proxy replays on a borrowed connection so it behaves like the client's own.
#include <gtest/gtest.h>

#include "parser/classify.hpp"
#include "proxy/session_state.hpp"

namespace sp::proxy {
namespace {

using Kind = parser::SessionSetting::Kind;

parser::SessionSetting setting(Kind kind, std::string name, std::string value) {
  return parser::SessionSetting{kind, std::move(name), std::move(value)};
}

TEST(SessionState, IdenticalStatesNeedNothing) {
  SessionState a;
  a.names = "utf8mb4";
  a.variables["sql_mode"] = "'ANSI'";
  EXPECT_TRUE(syncStatements(a, a).empty());
}

TEST(SessionState, DifferentNamesAreReissued) {
  SessionState desired, applied;
  desired.names = "latin1";
  applied.names = "utf8mb4";
  EXPECT_EQ(syncStatements(desired, applied), std::vector<std::string>{"SET NAMES latin1"});
}

TEST(SessionState, VariablesAreAppliedInOneStatement) {
  SessionState desired, applied;
  desired.names = applied.names = "utf8mb4";
  desired.variables["sql_mode"] = "'ANSI'";
  desired.variables["time_zone"] = "'+00:00'";
  EXPECT_EQ(syncStatements(desired, applied),
            std::vector<std::string>{"SET @@session.sql_mode = 'ANSI', @@session.time_zone = '+00:00'"});
}

TEST(SessionState, VariablesLeftByAnotherSessionAreReset) {
  SessionState desired, applied;
  desired.names = applied.names = "utf8mb4";
  applied.variables["autocommit"] = "0";
  EXPECT_EQ(syncStatements(desired, applied), std::vector<std::string>{"SET @@session.autocommit = DEFAULT"});
}

TEST(SessionState, ChangedValueIsReapplied) {
  SessionState desired, applied;
  desired.variables["wait_timeout"] = "5";
  applied.variables["wait_timeout"] = "10";
  EXPECT_EQ(syncStatements(desired, applied), std::vector<std::string>{"SET @@session.wait_timeout = 5"});
}

TEST(SessionState, IsolationSetAndReset) {
  SessionState desired, applied;
  desired.isolation = "ISOLATION LEVEL READ COMMITTED";
  EXPECT_EQ(syncStatements(desired, applied),
            std::vector<std::string>{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"});
  EXPECT_EQ(syncStatements(applied, desired),
            std::vector<std::string>{"SET @@session.tx_isolation = DEFAULT, @@session.tx_read_only = DEFAULT"});
}

TEST(SessionState, CharacterSetThenBackToNames) {
  SessionState desired, applied;
  desired.names = applied.names = "utf8mb4";
  desired.character_set = "latin1";
  EXPECT_EQ(syncStatements(desired, applied), std::vector<std::string>{"SET CHARACTER SET latin1"});
  // A connection that had SET CHARACTER SET returns to plain SET NAMES state.
  EXPECT_EQ(syncStatements(applied, desired), std::vector<std::string>{"SET NAMES utf8mb4"});
}

TEST(SessionState, ApplyRecordsOnlySessionState) {
  SessionState s;
  EXPECT_TRUE(s.apply(setting(Kind::kSystemVariable, "SQL_MODE", "'ANSI'")));
  EXPECT_EQ(s.variables.at("sql_mode"), "'ANSI'");
  EXPECT_FALSE(s.apply(setting(Kind::kGlobalVariable, "max_connections", "10")));
  EXPECT_FALSE(s.apply(setting(Kind::kUserVariable, "x", "1")));
  EXPECT_FALSE(s.apply(setting(Kind::kNextTransaction, "", "READ ONLY")));
  EXPECT_EQ(s.variables.size(), 1u);
  EXPECT_TRUE(s.apply(setting(Kind::kNames, "", "'UTF8MB4' COLLATE 'utf8mb4_bin'")));
  EXPECT_EQ(s.names, "utf8mb4 collate utf8mb4_bin");
}

TEST(SessionState, ClassifiedSetStatementFeedsState) {
  auto info = parser::classify("SET NAMES latin1, autocommit = 0, @@session.time_zone = '+01:00', @x = 1");
  ASSERT_EQ(info.kind, parser::StatementKind::kSet);
  SessionState s;
  for (const auto& st : info.settings) s.apply(st);
  EXPECT_EQ(s.names, "latin1");
  EXPECT_EQ(s.variables.at("autocommit"), "0");
  EXPECT_EQ(s.variables.at("time_zone"), "'+01:00'");
  EXPECT_EQ(s.variables.size(), 2u);
}

TEST(SessionState, HandshakeCollations) {
  EXPECT_EQ(namesForCollation(45), "utf8mb4");
  EXPECT_EQ(namesForCollation(8), "latin1");
  EXPECT_EQ(namesForCollation(224), "utf8mb4 collate utf8mb4_unicode_ci");
  // MySQL 8's utf8mb4_0900_ai_ci (255) is unknown to MariaDB: fall back to utf8mb4.
  EXPECT_EQ(namesForCollation(255), "utf8mb4");
}

}  // namespace
}  // namespace sp::proxy
