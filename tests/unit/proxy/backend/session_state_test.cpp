// Session-state carry-over between multiplexed backend connections: what the
// proxy replays on a borrowed connection so it behaves like the client's own.
#include <gtest/gtest.h>

#include "parser/classify.hpp"
#include "proxy/backend/session_state.hpp"

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

TEST(SessionState, CharsetVariablesOfAnotherSessionAreResetBeforeNames) {
  // A connection whose previous session ran SET NAMES big5 (tracked as
  // variables) serves a session that logged in with gbk.
  SessionState desired, applied;
  desired.names = "gbk";
  applied.names = "big5";
  applied.variables["character_set_client"] = "'big5'";
  applied.variables["character_set_results"] = "'big5'";
  EXPECT_EQ(syncStatements(desired, applied),
            (std::vector<std::string>{
                "SET @@session.character_set_client = DEFAULT, @@session.character_set_results = DEFAULT",
                "SET NAMES gbk"}));
  // Same names: SET NAMES is still re-issued after the resets.
  applied.names = "gbk";
  EXPECT_EQ(syncStatements(desired, applied),
            (std::vector<std::string>{
                "SET @@session.character_set_client = DEFAULT, @@session.character_set_results = DEFAULT",
                "SET NAMES gbk"}));
  // The session's own character_set_results comes after its SET NAMES.
  desired.variables["character_set_results"] = "'binary'";
  applied.variables["character_set_results"] = "'binary'";
  EXPECT_EQ(syncStatements(desired, applied),
            (std::vector<std::string>{"SET @@session.character_set_client = DEFAULT", "SET NAMES gbk",
                                      "SET @@session.character_set_results = 'binary'"}));
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

// What a backend reported about a statement (CLIENT_SESSION_TRACK) becomes
// the session's state, replayable on another connection.
protocol::SessionChanges reported(std::vector<protocol::SessionChanges::Variable> vars, bool state_changed = true) {
  protocol::SessionChanges c;
  c.variables = std::move(vars);
  c.state_changed = state_changed;
  return c;
}

TEST(TrackedChanges, VariablesAreAdoptedAsReplayableLiterals) {
  SessionState desired, applied;
  auto c = reported({{"sql_mode", "ANSI_QUOTES,STRICT_TRANS_TABLES"}, {"autocommit", "OFF"},
                     {"wait_timeout", "100"}, {"character_set_results", ""}, {"time_zone", "+01:00"},
                     {"lc_time_names", "it'IT"}});
  EXPECT_EQ(adoptTrackedChanges(c, true, desired, applied), TrackedAdoption::kCarried);
  EXPECT_EQ(desired.variables["sql_mode"], "'ANSI_QUOTES,STRICT_TRANS_TABLES'");
  EXPECT_EQ(desired.variables["autocommit"], "'OFF'");
  EXPECT_EQ(desired.variables["wait_timeout"], "100");         // numeric variables refuse strings
  EXPECT_EQ(desired.variables["character_set_results"], "NULL");
  EXPECT_EQ(desired.variables["time_zone"], "'+01:00'");
  EXPECT_EQ(desired.variables["lc_time_names"], "'it''IT'");
  EXPECT_EQ(desired.variables, applied.variables);
  EXPECT_TRUE(syncStatements(desired, applied).empty());
}

TEST(TrackedChanges, SchemaIsAdopted) {
  SessionState desired, applied;
  protocol::SessionChanges c;
  c.schema = "mysql";
  c.schema_changed = true;
  c.state_changed = true;
  EXPECT_EQ(adoptTrackedChanges(c, true, desired, applied), TrackedAdoption::kCarried);
  EXPECT_EQ(desired.database, "mysql");
  EXPECT_EQ(applied.database, "mysql");
}

TEST(TrackedChanges, UnexplainedStateChangeBindsTheConnection) {
  // SET @x = 1, CREATE TEMPORARY TABLE, PREPARE, SET ROLE: STATE_CHANGE alone.
  SessionState desired, applied;
  EXPECT_EQ(adoptTrackedChanges(reported({}), true, desired, applied), TrackedAdoption::kStateChanged);
  EXPECT_EQ(adoptTrackedChanges(reported({}), false, desired, applied), TrackedAdoption::kStateChanged);
}

TEST(TrackedChanges, AProcedureThatChangesStateBindsTheConnectionButItsVariablesAreKept) {
  // CALL p() that sets time_zone and a user variable: the variable report
  // does not account for the user variable.
  SessionState desired, applied;
  EXPECT_EQ(adoptTrackedChanges(reported({{"time_zone", "+05:00"}}), false, desired, applied), TrackedAdoption::kStateChanged);
  EXPECT_EQ(desired.variables["time_zone"], "'+05:00'");
}

TEST(TrackedChanges, ConnectionBoundVariablesAreNotReplayed) {
  for (const char* name : {"insert_id", "rand_seed1", "session_track_system_variables", "session_track_state_change"}) {
    SessionState desired, applied;
    EXPECT_EQ(adoptTrackedChanges(reported({{name, "5"}}), true, desired, applied), TrackedAdoption::kUncarriedVariable) << name;
    EXPECT_FALSE(desired.variables.contains(name)) << name;
  }
}

TEST(TrackedChanges, LastGtidIsReportedOnlyNeitherReplayedNorBinding) {
  // With the binary log on, a commit reports the GTID it wrote (read-only:
  // SET last_gtid fails with 1238); an INSERT that reports only that is
  // carried as usual.
  SessionState desired, applied;
  EXPECT_EQ(adoptTrackedChanges(reported({{"last_gtid", "0-3430-17"}}, false), false, desired, applied), TrackedAdoption::kCarried);
  EXPECT_FALSE(desired.variables.contains("last_gtid"));
  // It explains no STATE_CHANGE either.
  EXPECT_EQ(adoptTrackedChanges(reported({{"last_gtid", "0-3430-18"}}, true), true, desired, applied), TrackedAdoption::kStateChanged);
  EXPECT_TRUE(desired.variables.empty());
}

TEST(TrackedChanges, AValueWithABackslashIsNotReplayed) {
  // Its quoting depends on NO_BACKSLASH_ESCAPES of the connection it would be replayed on.
  SessionState desired, applied;
  EXPECT_EQ(adoptTrackedChanges(reported({{"lc_messages_dir", "C:\\x"}}), true, desired, applied), TrackedAdoption::kUncarriedVariable);
  EXPECT_FALSE(desired.variables.contains("lc_messages_dir"));
}

TEST(CarryAutocommit, FollowsTheServerFlagOnceItLeavesTheDefault) {
  SessionState desired, applied;
  carryAutocommit(true, true, desired, applied);
  EXPECT_FALSE(desired.variables.contains("autocommit"));  // never changed: nothing to replay
  desired.variables["autocommit"] = "@v";                   // SET autocommit = @v, as written
  carryAutocommit(false, true, desired, applied);
  EXPECT_EQ(desired.variables["autocommit"], "0");          // as the server says it is
  EXPECT_EQ(applied.variables["autocommit"], "0");
  carryAutocommit(true, true, desired, applied);
  EXPECT_EQ(desired.variables["autocommit"], "1");
}

TEST(TrackedChanges, NothingReportedChangesNothing) {
  SessionState desired, applied;
  EXPECT_EQ(adoptTrackedChanges(protocol::SessionChanges{}, false, desired, applied), TrackedAdoption::kCarried);
  EXPECT_TRUE(desired.variables.empty());
}

}  // namespace
}  // namespace sp::proxy
