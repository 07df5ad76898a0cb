// The admin command language: case, comments, spacing and ';' as in SQL;
// malformed and unknown commands are errors with a message, never a crash.
#include <gtest/gtest.h>

#include "proxy/schema/schema_command.hpp"
#include "proxy/admin/admin_command.hpp"
#include "proxy/admin/background_command.hpp"
#include "proxy/admin/limit_command.hpp"
#include "proxy/ha/ha_command.hpp"
#include "proxy/admin/admin_results.hpp"
#include "proxy/lifecycle/lifecycle_command.hpp"
#include "proxy/move/move_command.hpp"

namespace sp::proxy {
namespace {

AdminCommandKind kindOf(std::string_view sql) {
  auto c = parseAdminCommand(sql);
  EXPECT_TRUE(c.has_value()) << sql << ": " << (c ? "" : c.error());
  return c ? c->kind : AdminCommandKind::kEmpty;
}

TEST(AdminCommand, RecognisesEveryCommandInAnyCaseWithTrailingSemicolons) {
  EXPECT_EQ(kindOf("SHOW SHARD MAP"), AdminCommandKind::kShowShardMap);
  EXPECT_EQ(kindOf("show shard map;"), AdminCommandKind::kShowShardMap);
  EXPECT_EQ(kindOf("  Show\n\tShard  Map ;; "), AdminCommandKind::kShowShardMap);
  EXPECT_EQ(kindOf("show /* c */ shard map history"), AdminCommandKind::kShowShardMapHistory);
  EXPECT_EQ(kindOf("SHOW SHARD MAP ERRORS;"), AdminCommandKind::kShowShardMapErrors);
  EXPECT_EQ(kindOf("reload shard map"), AdminCommandKind::kReloadShardMap);
  EXPECT_EQ(kindOf("SHOW BACKENDS"), AdminCommandKind::kShowBackends);
  EXPECT_EQ(kindOf("show  fleet ;"), AdminCommandKind::kShowFleet);
  EXPECT_EQ(kindOf("show sessions -- trailing comment"), AdminCommandKind::kShowSessions);
  EXPECT_EQ(kindOf("help;"), AdminCommandKind::kHelp);
  EXPECT_EQ(kindOf("show schema drift;"), AdminCommandKind::kShowSchemaDrift);
  EXPECT_EQ(kindOf("SET NAMES utf8mb4"), AdminCommandKind::kIgnoredSet);
  EXPECT_EQ(kindOf("SET autocommit=1"), AdminCommandKind::kIgnoredSet);
  EXPECT_EQ(kindOf("use im"), AdminCommandKind::kUse);
  EXPECT_EQ(kindOf(""), AdminCommandKind::kEmpty);
  EXPECT_EQ(kindOf(" ; "), AdminCommandKind::kEmpty);
}

TEST(AdminCommand, RollbackTakesAVersion) {
  auto c = parseAdminCommand("ROLLBACK SHARD MAP TO 17;");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, AdminCommandKind::kRollbackShardMap);
  EXPECT_EQ(c->version, 17u);
  auto lower = parseAdminCommand("rollback shard map to 3");
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(lower->version, 3u);
}

TEST(AdminCommand, RollbackWithoutAUsableVersionIsAnError) {
  for (std::string_view bad : {"ROLLBACK SHARD MAP TO", "ROLLBACK SHARD MAP TO x", "ROLLBACK SHARD MAP TO 1 2",
                               "ROLLBACK SHARD MAP TO 'x'", "ROLLBACK SHARD MAP TO 99999999999999999999999"}) {
    auto c = parseAdminCommand(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_NE(c.error().find("version"), std::string::npos) << c.error();
  }
}

TEST(AdminCommand, ShowRouteKeepsTheStatementTextWithoutTheSemicolon) {
  auto c = parseAdminCommand("SHOW ROUTE select * from msg where conv_id = 42 ;");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, AdminCommandKind::kShowRoute);
  EXPECT_EQ(c->statement, "select * from msg where conv_id = 42");
  auto quoted = parseAdminCommand("show route SELECT 'a;b' FROM t");
  ASSERT_TRUE(quoted.has_value());
  EXPECT_EQ(quoted->statement, "SELECT 'a;b' FROM t");
  EXPECT_FALSE(parseAdminCommand("SHOW ROUTE").has_value());
  EXPECT_FALSE(parseAdminCommand("SHOW ROUTE ;").has_value());
}

TEST(AdminCommand, ClientStartupProbes) {
  auto c = parseAdminCommand("select @@version_comment limit 1");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, AdminCommandKind::kSelectVariables);
  ASSERT_EQ(c->items.size(), 1u);
  EXPECT_EQ(c->items[0].label, "@@version_comment");
  EXPECT_EQ(c->items[0].name, "version_comment");
  auto several = parseAdminCommand("SELECT DATABASE(), USER(), @@session.AUTOCOMMIT");
  ASSERT_TRUE(several.has_value());
  ASSERT_EQ(several->items.size(), 3u);
  EXPECT_EQ(several->items[0].name, "database()");
  EXPECT_EQ(several->items[1].label, "USER()");
  EXPECT_EQ(several->items[2].name, "autocommit");
  EXPECT_FALSE(parseAdminCommand("SELECT * FROM msg").has_value());
  EXPECT_FALSE(parseAdminCommand("SELECT @@a @@b").has_value());
}

TEST(AdminCommand, UnknownOrTruncatedCommandsListTheCommands) {
  for (std::string_view bad : {"SHOW SHARD", "SHOW SHARD MAPS", "RELOAD", "RELOAD SHARD MAP NOW", "DROP TABLE x",
                               "show tables", "SHOW SHARD MAP HISTORY 3"}) {
    auto c = parseAdminCommand(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_NE(c.error().find("RELOAD SHARD MAP"), std::string::npos) << c.error();
  }
}

TEST(AdminCommand, LexerErrorsAreReportedWithTheirOffset) {
  auto c = parseAdminCommand("SHOW ROUTE SELECT 'unterminated");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().find("offset 18"), std::string::npos) << c.error();
}

TEST(AdminCommand, HelpNamesEveryCommand) {
  auto help = adminCommandHelp();
  EXPECT_GE(help.size(), 8u);
  for (const auto& [command, text] : help) {
    if (command.find('<') != std::string::npos) continue;  // needs an argument
    if (command.starts_with("ARCHIVE") || command.starts_with("SHOW ARCHIVES")) continue;  // lifecycle_command_test.cpp
    if (auto move = parseMoveCommand(command)) {  // the moves' own grammar (move_command_test.cpp)
      EXPECT_TRUE(move->has_value()) << command;
      continue;
    }
    if (auto ha = parseHaCommand(command)) {  // replication groups' own grammar (ha_command_test.cpp)
      EXPECT_TRUE(ha->has_value()) << command;
      continue;
    }
    if (auto schema = parseSchemaCommand(command)) {  // schema changes' own grammar (schema_command_test.cpp)
      EXPECT_TRUE(schema->has_value()) << command;
      continue;
    }
    if (auto background = parseBackgroundCommand(command)) {  // background_command_test.cpp
      EXPECT_TRUE(background->has_value()) << command;
      continue;
    }
    if (auto limit = parseLimitCommand(command)) {  // limit_command_test.cpp
      EXPECT_TRUE(limit->has_value()) << command;
      continue;
    }
    EXPECT_TRUE(parseAdminCommand(command).has_value()) << command;
    EXPECT_FALSE(text.empty());
  }
}

}  // namespace
}  // namespace sp::proxy

namespace sp::proxy {
namespace {

TEST(AdminCommandDigests, ShowAndReset) {
  auto all = parseAdminCommand("show digests;");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->kind, AdminCommandKind::kShowDigests);
  EXPECT_EQ(all->limit, 0u);
  auto top = parseAdminCommand("SHOW DIGESTS LIMIT 5");
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->limit, 5u);
  auto alias = parseAdminCommand("SHOW QUERY DIGEST LIMIT 2");
  ASSERT_TRUE(alias.has_value());
  EXPECT_EQ(alias->kind, AdminCommandKind::kShowDigests);
  EXPECT_EQ(alias->limit, 2u);
  EXPECT_FALSE(parseAdminCommand("SHOW DIGESTS LIMIT 0").has_value());
  EXPECT_FALSE(parseAdminCommand("SHOW DIGESTS LIMIT x").has_value());
  EXPECT_FALSE(parseAdminCommand("SHOW DIGESTS 5").has_value());
  EXPECT_EQ(parseAdminCommand("reset digests")->kind, AdminCommandKind::kResetDigests);
  EXPECT_EQ(parseAdminCommand("RESET QUERY DIGEST")->kind, AdminCommandKind::kResetDigests);
  EXPECT_EQ(parseAdminCommand("show stats;")->kind, AdminCommandKind::kShowStats);
}

TEST(AdminCommandTransactions, ShowTransactions) {
  EXPECT_EQ(kindOf("show transactions;"), AdminCommandKind::kShowTransactions);
  EXPECT_EQ(kindOf("SHOW TRANSACTIONS"), AdminCommandKind::kShowTransactions);
  EXPECT_FALSE(parseAdminCommand("SHOW TRANSACTIONS 5").has_value());
}

TEST(AdminCommandHotKeys, ShowWithAnOptionalLimit) {
  EXPECT_EQ(kindOf("show hot keys;"), AdminCommandKind::kShowHotKeys);
  auto top = parseAdminCommand("SHOW HOT KEYS LIMIT 3");
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->kind, AdminCommandKind::kShowHotKeys);
  EXPECT_EQ(top->limit, 3u);
  auto bad = parseAdminCommand("SHOW HOT KEYS LIMIT 0");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("positive"), std::string::npos) << bad.error();
  auto usage = parseAdminCommand("SHOW HOT KEYS 5");
  ASSERT_FALSE(usage.has_value());
  EXPECT_NE(usage.error().find("SHOW HOT KEYS [LIMIT n]"), std::string::npos) << usage.error();
}

}  // namespace

TEST(RefusalMessage, FitsTheBudgetAndPointsToTheFullList) {
  std::vector<std::string> problems;
  for (int i = 0; i < 30; ++i) problems.push_back("map.yaml:" + std::to_string(i) + ": tables.x: problem number " + std::to_string(i));
  auto text = refusalMessage("RELOAD SHARD MAP refused: 30 problems", problems, 500);
  EXPECT_LE(text.size(), 500u);
  EXPECT_NE(text.find("problem number 0"), std::string::npos);
  EXPECT_NE(text.find("SHOW SHARD MAP ERRORS lists all 30"), std::string::npos);
  auto few = refusalMessage("refused", {"one", "two"}, 500);
  EXPECT_EQ(few, "refused:\none\ntwo");
}
}  // namespace sp::proxy
