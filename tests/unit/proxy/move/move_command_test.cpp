// The online-move admin commands: which texts are move commands, their
// arguments, and the "expected ..." error for one spelled wrongly.
#include <gtest/gtest.h>

#include "proxy/move/move_command.hpp"

namespace sp::proxy {
namespace {

MoveCommand parsed(std::string_view sql) {
  auto c = parseMoveCommand(sql);
  EXPECT_TRUE(c.has_value()) << sql;
  if (!c) return {};
  EXPECT_TRUE(c->has_value()) << sql << ": " << (*c ? "" : c->error());
  return c->value_or(MoveCommand{});
}

std::string refusal(std::string_view sql) {
  auto c = parseMoveCommand(sql);
  EXPECT_TRUE(c.has_value()) << sql;
  if (!c || *c) return {};
  return c->error();
}

TEST(MoveCommand, MoveBucketsWithList) {
  auto c = parsed("move bucket 17, 18,40 of `tg_channel_message` to s03;");
  EXPECT_EQ(c.kind, MoveCommandKind::kMove);
  EXPECT_EQ(c.request.kind, routing::MoveKind::kBuckets);
  EXPECT_EQ(c.request.buckets, (std::vector<uint32_t>{17, 18, 40}));
  EXPECT_EQ(c.request.table, "tg_channel_message");
  EXPECT_EQ(c.request.target, "s03");
}

TEST(MoveCommand, MoveKeyAndShard) {
  auto key = parsed("MOVE KEY 18446744073709551615 OF tg_channel_message TO s03");
  EXPECT_EQ(key.request.kind, routing::MoveKind::kKey);
  EXPECT_EQ(key.request.key, 18446744073709551615ull);
  auto shard = parsed("/* c */ MOVE SHARD 5 OF msg TO db1");
  EXPECT_EQ(shard.request.kind, routing::MoveKind::kShard);
  EXPECT_EQ(shard.request.shard, 5u);
  EXPECT_EQ(shard.request.target, "db1");
}

TEST(MoveCommand, ShowCancelCleanup) {
  EXPECT_EQ(parsed("show moves").kind, MoveCommandKind::kShow);
  auto cancel = parsed("CANCEL MOVE 3");
  EXPECT_EQ(cancel.kind, MoveCommandKind::kCancel);
  EXPECT_EQ(cancel.id, 3);
  auto cleanup = parsed("cleanup move 12;");
  EXPECT_EQ(cleanup.kind, MoveCommandKind::kCleanup);
  EXPECT_EQ(cleanup.id, 12);
}

TEST(MoveCommand, MalformedFormsSayWhatIsExpected) {
  EXPECT_NE(refusal("MOVE BUCKET OF tg_channel_message TO s03").find("MOVE BUCKET <n>"), std::string::npos);
  EXPECT_NE(refusal("MOVE BUCKET 17 OF tg_channel_message").find("expected"), std::string::npos);
  EXPECT_NE(refusal("MOVE BUCKET 17, OF t TO s").find("expected"), std::string::npos);
  EXPECT_NE(refusal("MOVE KEY -5 OF t TO s").find("unsigned 64-bit"), std::string::npos);
  EXPECT_NE(refusal("MOVE TABLE t TO db1").find("MOVE SHARD"), std::string::npos);
  EXPECT_NE(refusal("CANCEL MOVE").find("CANCEL MOVE <id>"), std::string::npos);
  EXPECT_NE(refusal("CLEANUP MOVE x").find("CLEANUP MOVE <id>"), std::string::npos);
  EXPECT_NE(refusal("SHOW MOVES 3").find("SHOW MOVES"), std::string::npos);
}

TEST(MoveCommand, OtherCommandsAreNotMoves) {
  EXPECT_FALSE(parseMoveCommand("SHOW SHARD MAP").has_value());
  EXPECT_FALSE(parseMoveCommand("SHOW ARCHIVES").has_value());
  EXPECT_FALSE(parseMoveCommand("RELOAD SHARD MAP").has_value());
}

}  // namespace
}  // namespace sp::proxy
