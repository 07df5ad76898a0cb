// IdleTimeout: a session's wait_timeout as MariaDB keeps it (login,
// interactive clients, SET with and without session tracking, DEFAULT,
// COM_RESET_CONNECTION).
#include "proxy/session/idle_timeout.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace sp::proxy {
namespace {

using Kind = parser::SessionSetting::Kind;

conf::ServerConfig server() {
  conf::ServerConfig s;
  s.wait_timeout_s = 600;
  s.interactive_timeout_s = 3600;
  return s;
}

std::vector<parser::SessionSetting> set(std::string name, std::string value, Kind kind = Kind::kSystemVariable) {
  return {parser::SessionSetting{kind, std::move(name), std::move(value)}};
}

protocol::SessionChanges reported(std::string name, std::string value) {
  protocol::SessionChanges c;
  c.variables.push_back({std::move(name), std::move(value)});
  return c;
}

TEST(IdleTimeout, LoginTakesWaitTimeoutOrInteractiveTimeout) {
  IdleTimeout t;
  t.onLogin(server(), false);
  EXPECT_EQ(t.limit().count(), 600);
  t.onLogin(server(), true);
  EXPECT_EQ(t.limit().count(), 3600) << "CLIENT_INTERACTIVE: interactive_timeout, as the server copies it";
}

TEST(IdleTimeout, TrackedSetTakesTheReportedValue) {
  IdleTimeout t;
  t.onLogin(server(), false);
  // SET wait_timeout = 1 + 1: the server reports the result.
  t.onStatement(set("wait_timeout", "1 + 1"), reported("wait_timeout", "2"), true, server());
  EXPECT_EQ(t.limit().count(), 2);
  // SET wait_timeout = 0: the server clamps to 1 and reports 1.
  t.onStatement(set("wait_timeout", "0"), reported("wait_timeout", "1"), true, server());
  EXPECT_EQ(t.limit().count(), 1);
  // Raising it works as well.
  t.onStatement(set("WAIT_TIMEOUT", "90000"), reported("WAIT_TIMEOUT", "90000"), true, server());
  EXPECT_EQ(t.limit().count(), 90000);
}

TEST(IdleTimeout, UnreportedAssignmentIsTakenAsWritten) {
  IdleTimeout t;
  t.onLogin(server(), false);
  // MariaDB 10.11 reports nothing for `SET @@wait_timeout = 5` (tracked, no entry).
  t.onStatement(set("wait_timeout", "5"), {}, true, server());
  EXPECT_EQ(t.limit().count(), 5);
  t.onStatement(set("wait_timeout", "@v"), {}, true, server());  // not a literal: unknown, unchanged
  EXPECT_EQ(t.limit().count(), 5);
}

TEST(IdleTimeout, ReportFromAnyStatementCounts) {
  IdleTimeout t;
  t.onLogin(server(), false);
  t.onStatement({}, reported("wait_timeout", "7"), true, server());  // CALL p() that SETs it
  EXPECT_EQ(t.limit().count(), 7);
  t.onStatement({}, reported("sql_mode", "ANSI"), true, server());
  EXPECT_EQ(t.limit().count(), 7);
}

TEST(IdleTimeout, DefaultIsTheProxysGlobalNotTheBackends) {
  IdleTimeout t;
  t.onLogin(server(), true);
  t.onStatement(set("wait_timeout", "5"), reported("wait_timeout", "5"), true, server());
  // The backend reports its own global (28800); the proxy's global is server.wait_timeout_s,
  // also for an interactive session (DEFAULT is the global wait_timeout on the server too).
  t.onStatement(set("wait_timeout", "DEFAULT"), reported("wait_timeout", "28800"), true, server());
  EXPECT_EQ(t.limit().count(), 600);
  t.onStatement(set("wait_timeout", "5"), reported("wait_timeout", "5"), true, server());
  t.onStatement(set("wait_timeout", "@@global.wait_timeout"), reported("wait_timeout", "28800"), true, server());
  EXPECT_EQ(t.limit().count(), 600);
}

TEST(IdleTimeout, UntrackedLiteralsAreClampedAsTheServerDoes) {
  IdleTimeout t;
  t.onLogin(server(), false);
  t.onStatement(set("wait_timeout", " 3 "), {}, false, server());
  EXPECT_EQ(t.limit().count(), 3);
  t.onStatement(set("wait_timeout", "0"), {}, false, server());
  EXPECT_EQ(t.limit().count(), 1);
  t.onStatement(set("wait_timeout", "99999999999999999999999"), {}, false, server());
  EXPECT_EQ(t.limit().count(), IdleTimeout::kMax);
  t.onStatement(set("wait_timeout", "-4"), {}, false, server());
  EXPECT_EQ(t.limit().count(), 1);
  t.onStatement(set("wait_timeout", "@v"), {}, false, server());  // unknown without a report: unchanged
  EXPECT_EQ(t.limit().count(), 1);
  t.onStatement(set("wait_timeout", "default"), {}, false, server());
  EXPECT_EQ(t.limit().count(), 600);
}

TEST(IdleTimeout, OtherAssignmentsDoNotCount) {
  IdleTimeout t;
  t.onLogin(server(), false);
  // A session's interactive_timeout is read at login only, as on the server.
  t.onStatement(set("interactive_timeout", "5"), reported("interactive_timeout", "5"), true, server());
  EXPECT_EQ(t.limit().count(), 600);
  t.onStatement(set("wait_timeout", "5", Kind::kGlobalVariable), {}, false, server());
  EXPECT_EQ(t.limit().count(), 600) << "SET GLOBAL changes new sessions on the backend, not this one";
  t.onStatement(set("wait_timeout", "5", Kind::kUserVariable), {}, false, server());
  EXPECT_EQ(t.limit().count(), 600) << "SET @wait_timeout is a user variable";
}

TEST(IdleTimeout, LastAssignmentWins) {
  IdleTimeout t;
  t.onLogin(server(), false);
  std::vector<parser::SessionSetting> two = {{Kind::kSystemVariable, "wait_timeout", "5"},
                                             {Kind::kSystemVariable, "wait_timeout", "DEFAULT"}};
  protocol::SessionChanges changes;
  changes.variables = {{"wait_timeout", "5"}, {"wait_timeout", "28800"}};
  t.onStatement(two, changes, true, server());
  EXPECT_EQ(t.limit().count(), 600);
}

TEST(IdleTimeout, ResetConnectionGoesBackToTheGlobal) {
  IdleTimeout t;
  t.onLogin(server(), true);
  t.onStatement(set("wait_timeout", "5"), reported("wait_timeout", "5"), true, server());
  t.onReset(server());
  EXPECT_EQ(t.limit().count(), 600);
}

}  // namespace
}  // namespace sp::proxy
