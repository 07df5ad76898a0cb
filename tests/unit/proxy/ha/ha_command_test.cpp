// The replication-group commands of the admin port: every form, case and
// comments as in SQL, and malformed ones refused with the expected form.
#include <gtest/gtest.h>

#include "proxy/ha/ha_command.hpp"

namespace sp::proxy {
namespace {

HaCommand parsed(std::string_view sql) {
  auto r = parseHaCommand(sql);
  EXPECT_TRUE(r.has_value()) << sql;
  if (!r) return {};
  EXPECT_TRUE(r->has_value()) << sql << ": " << (r->has_value() ? "" : r->error());
  return r->has_value() ? **r : HaCommand{};
}

TEST(HaCommand, EveryForm) {
  auto s = parsed("SWITCHOVER BACKEND db1 TO db1r1");
  EXPECT_EQ(s.kind, HaCommandKind::kSwitchover);
  EXPECT_EQ(s.backend, "db1");
  EXPECT_EQ(s.server, "db1r1");
  s = parsed("switchover backend `db1`;");
  EXPECT_EQ(s.kind, HaCommandKind::kSwitchover);
  EXPECT_EQ(s.backend, "db1");
  EXPECT_EQ(s.server, "");
  auto f = parsed("/* planned? no */ FAILOVER BACKEND db1");
  EXPECT_EQ(f.kind, HaCommandKind::kFailover);
  EXPECT_EQ(f.backend, "db1");
  f = parsed("failover backend db1 to r2");
  EXPECT_EQ(f.server, "r2");
  auto r = parsed("REJOIN BACKEND db1 SERVER db1");
  EXPECT_EQ(r.kind, HaCommandKind::kRejoin);
  EXPECT_EQ(r.backend, "db1");
  EXPECT_EQ(r.server, "db1");
  EXPECT_EQ(parsed("show topology").kind, HaCommandKind::kShowTopology);
}

TEST(HaCommand, MalformedNamesTheForm) {
  for (std::string_view sql : {"SWITCHOVER db1", "SWITCHOVER BACKEND", "SWITCHOVER BACKEND db1 TO",
                               "SWITCHOVER BACKEND db1 r1", "FAILOVER", "FAILOVER BACKEND db1 TO r1 now",
                               "REJOIN BACKEND db1", "REJOIN BACKEND db1 SERVER", "REJOIN db1", "SHOW TOPOLOGY x"}) {
    auto r = parseHaCommand(sql);
    ASSERT_TRUE(r.has_value()) << sql << " is one of these commands, spelled wrongly";
    ASSERT_FALSE(r->has_value()) << sql;
    EXPECT_NE(r->error().find("expected"), std::string::npos) << r->error();
  }
}

TEST(HaCommand, OtherCommandsAreNotTheirs) {
  for (std::string_view sql : {"SHOW BACKENDS", "MOVE KEY 1 OF msg TO s01", "SELECT 1", "", "show topologies"}) {
    EXPECT_FALSE(parseHaCommand(sql).has_value()) << sql;
  }
}

TEST(HaCommand, HelpListsEveryCommand) {
  auto help = haCommandHelp();
  ASSERT_EQ(help.size(), 4u);
  for (const auto& [command, text] : help) EXPECT_FALSE(text.empty()) << command;
}

}  // namespace
}  // namespace sp::proxy
