// The admin port's SHOW BACKGROUND / SET BACKGROUND (proxy/admin/background_command.hpp).
#include <gtest/gtest.h>

#include "proxy/admin/background_command.hpp"
#include "proxy/core/background_gate.hpp"

namespace sp::proxy {
namespace {

TEST(BackgroundCommand, ParsesShowAndSet) {
  auto show = parseBackgroundCommand("show background;");
  ASSERT_TRUE(show && *show);
  EXPECT_EQ((*show)->kind, BackgroundCommand::Kind::kShow);
  auto set = parseBackgroundCommand("SET BACKGROUND MAX_FOREGROUND_P99_MS = 40");
  ASSERT_TRUE(set && *set);
  EXPECT_EQ((*set)->kind, BackgroundCommand::Kind::kSet);
  EXPECT_EQ((*set)->key, "max_foreground_p99_ms");
  EXPECT_EQ((*set)->value, 40u);
  EXPECT_FALSE(parseBackgroundCommand("SET NAMES utf8mb4").has_value());
  EXPECT_FALSE(parseBackgroundCommand("SHOW BACKENDS").has_value());
}

TEST(BackgroundCommand, RefusesUnknownKeysAndValuesOutOfRange) {
  auto unknown = parseBackgroundCommand("SET BACKGROUND speed = 3");
  ASSERT_TRUE(unknown && !*unknown);
  EXPECT_NE(unknown->error().find("unknown key speed"), std::string::npos) << unknown->error();
  auto low = parseBackgroundCommand("SET BACKGROUND check_ms = 10");
  ASSERT_TRUE(low && !*low);
  EXPECT_EQ(low->error(), "background.check_ms takes 50 to 60000");
  for (const char* bad : {"SET BACKGROUND check_ms 100", "SET BACKGROUND check_ms = 'x'", "SHOW BACKGROUND db0",
                          "SET BACKGROUND = 3"}) {
    auto r = parseBackgroundCommand(bad);
    ASSERT_TRUE(r && !*r) << bad;
    EXPECT_NE(r->error().find("usage:"), std::string::npos) << bad;
  }
}

TEST(BackgroundCommand, SetChangesTheGateAndShowListsIt) {
  BackgroundGate gate(conf::BackgroundConfig{});
  auto set = parseBackgroundCommand("SET BACKGROUND max_replica_lag_s = 3");
  ASSERT_TRUE(set && *set);
  EXPECT_TRUE(std::holds_alternative<AdminOk>(runBackgroundCommand(gate, **set)));
  EXPECT_EQ(gate.settings().max_replica_lag_s, 3u);
  gate.publish({{"db1", "replica db1r1 of db1 is 9 s behind (background.max_replica_lag_s = 3)"}});
  auto shown = runBackgroundCommand(gate, BackgroundCommand{});
  ASSERT_TRUE(std::holds_alternative<LocalResult>(shown));
  const auto& rows = std::get<LocalResult>(shown).rows;
  ASSERT_EQ(rows.size(), conf::kBackgroundKeys.size() + 1);
  EXPECT_EQ(rows[2][2], "background.max_replica_lag_s = 3");
  EXPECT_EQ(rows.back()[0], "db1");
  EXPECT_EQ(rows.back()[1], "yes");
}

}  // namespace
}  // namespace sp::proxy
