// The data-lifecycle admin commands: which texts are lifecycle commands at
// all (nullopt hands them to the other admin parser), their arguments, and
// the "expected ..." error for a lifecycle command spelled wrongly.
#include <gtest/gtest.h>

#include "proxy/lifecycle/lifecycle_command.hpp"

namespace sp::proxy {
namespace {

LifecycleCommand parsed(std::string_view sql) {
  auto c = parseLifecycleCommand(sql);
  EXPECT_TRUE(c.has_value()) << sql;
  if (!c) return {};
  EXPECT_TRUE(c->has_value()) << sql << ": " << (*c ? "" : c->error());
  return c->value_or(LifecycleCommand{});
}

std::string refusal(std::string_view sql) {
  auto c = parseLifecycleCommand(sql);
  EXPECT_TRUE(c.has_value()) << sql;
  if (!c) return {};
  EXPECT_FALSE(c->has_value()) << sql;
  return *c ? std::string() : c->error();
}

TEST(LifecycleCommand, ShowPartitionsWithOptionalTableAndDate) {
  auto all = parsed("show partitions;");
  EXPECT_EQ(all.kind, LifecycleCommandKind::kShowPartitions);
  EXPECT_TRUE(all.table.empty());
  EXPECT_FALSE(all.as_of);
  auto one = parsed("SHOW PARTITIONS OF `tg_channel_message` AS OF '2026-12-31 23:00:00'");
  EXPECT_EQ(one.table, "tg_channel_message");
  ASSERT_TRUE(one.as_of);
  EXPECT_EQ(one.as_of->date, (routing::CivilDate{2026, 12, 31}));
}

TEST(LifecycleCommand, EnsurePartitionsNeedsAhead) {
  auto c = parsed("ensure partitions ahead 3 of tg_channel_message as of '2027-01-31'");
  EXPECT_EQ(c.kind, LifecycleCommandKind::kEnsurePartitions);
  EXPECT_EQ(c.ahead, 3u);
  EXPECT_EQ(c.table, "tg_channel_message");
  EXPECT_EQ(c.as_of->date, (routing::CivilDate{2027, 1, 31}));
  EXPECT_EQ(parsed("ENSURE PARTITIONS AHEAD 0").ahead, 0u);
  for (auto bad : {"ENSURE PARTITIONS", "ENSURE PARTITIONS AHEAD", "ENSURE PARTITIONS AHEAD 121",
                   "ENSURE PARTITIONS AHEAD x", "ENSURE PARTITIONS AHEAD 3 AS OF 'soon'",
                   "ENSURE PARTITIONS AHEAD 3 AS OF '2027-02-30'", "ENSURE PARTITIONS AHEAD 3 extra"}) {
    EXPECT_NE(refusal(bad).find("expected ENSURE PARTITIONS AHEAD <n>"), std::string::npos) << bad;
  }
}

TEST(LifecycleCommand, ArchiveForms) {
  auto older = parsed("ARCHIVE msg OLDER THAN 180 DAYS");
  EXPECT_EQ(older.kind, LifecycleCommandKind::kArchiveOlderThan);
  EXPECT_EQ(older.table, "msg");
  EXPECT_EQ(older.days, 180u);
  auto as_of = parsed("archive msg older than 1 day as of '2026-06-01'");
  EXPECT_EQ(as_of.days, 1u);
  ASSERT_TRUE(as_of.as_of);
  auto before = parsed("ARCHIVE tg_channel_message BEFORE '2025-01-01'");
  EXPECT_EQ(before.kind, LifecycleCommandKind::kArchiveBefore);
  EXPECT_EQ(before.before->date, (routing::CivilDate{2025, 1, 1}));
  EXPECT_EQ(parsed("SHOW ARCHIVES").kind, LifecycleCommandKind::kShowArchives);
  for (auto bad : {"ARCHIVE", "ARCHIVE msg", "ARCHIVE msg OLDER THAN 0 DAYS", "ARCHIVE msg OLDER THAN 5",
                   "ARCHIVE t BEFORE 2025", "ARCHIVE t BEFORE '2025-01-01' AS OF '2025-01-01'"}) {
    EXPECT_NE(refusal(bad).find("expected ARCHIVE <table>"), std::string::npos) << bad;
  }
}

TEST(LifecycleCommand, HelpLinesAreLifecycleCommands) {
  for (const auto& [command, text] : lifecycleCommandHelp()) {
    // The form without its optional parts, arguments filled in.
    std::string base = command.substr(0, command.find(" ["));
    for (auto [from, to] : {std::pair{"<table>", "msg"}, std::pair{"<n>", "3"}}) {
      if (auto at = base.find(from); at != std::string::npos) base.replace(at, std::string_view(from).size(), to);
    }
    EXPECT_TRUE(parseLifecycleCommand(base).has_value()) << base;
    EXPECT_FALSE(text.empty());
  }
}

TEST(LifecycleCommand, OtherCommandsAreNotLifecycleCommands) {
  for (auto sql : {"SHOW SHARD MAP", "HELP", "SHOW PARTITION", "SELECT 1", "", "show archive", "'unterminated"}) {
    EXPECT_FALSE(parseLifecycleCommand(sql).has_value()) << sql;
  }
}

}  // namespace
}  // namespace sp::proxy
