// KILL execution over scripted shards: KILL QUERY per server thread, a
// thread that already ended counts as done, failures name backend and thread.
#include <gtest/gtest.h>

#include "proxy/exec/kill_execution.hpp"
#include "scripted_shard.hpp"

namespace sp::proxy {
namespace {

using test::ScriptedShard;

KillTarget target(std::string backend, uint32_t thread) {
  KillTarget t;
  t.backend.name = std::move(backend);
  t.thread_id = thread;
  return t;
}

TEST(KillExecution, KillQueryPerThreadAndAnEndedThreadCountsAsDone) {
  std::vector<std::string> opened;
  KillChannelOpener open = [&](const conf::BackendConfig& b)
      -> awaitable<std::expected<std::unique_ptr<ShardChannel>, std::string>> {
    opened.push_back(b.name);
    auto shard = std::make_unique<ScriptedShard>();
    if (b.name == "db0") shard->ok();
    else shard->err(1094, "HY000", "Unknown thread id: 12");  // ended meanwhile
    co_return std::unique_ptr<ShardChannel>(std::move(shard));
  };
  std::vector<KillTarget> targets{target("db0", 11), target("db1", 12)};
  auto outcome = test::runToEnd(executeKill(targets, open));
  EXPECT_EQ(outcome.interrupted, 2u);
  EXPECT_TRUE(outcome.failures.empty());
  EXPECT_EQ(opened, (std::vector<std::string>{"db0", "db1"}));  // a connection of its own per thread
}

TEST(KillExecution, SendsKillQueryWithTheThreadId) {
  ScriptedShard shard;
  shard.ok();
  EXPECT_EQ(test::runToEnd(killQueryOn(shard, 42)), "");
  EXPECT_EQ(shard.sent, (std::vector<std::string>{"\x03KILL QUERY 42"}));
}

TEST(KillExecution, FailuresNameTheBackendAndThread) {
  KillChannelOpener open = [](const conf::BackendConfig& b)
      -> awaitable<std::expected<std::unique_ptr<ShardChannel>, std::string>> {
    if (b.name == "db0") co_return std::unexpected(std::string("connect failed: Connection refused"));
    auto shard = std::make_unique<ScriptedShard>();
    shard->err(1095, "HY000", "You are not owner of thread 7");
    co_return std::unique_ptr<ShardChannel>(std::move(shard));
  };
  std::vector<KillTarget> targets{target("db0", 5), target("db1", 7)};
  auto outcome = test::runToEnd(executeKill(targets, open));
  EXPECT_EQ(outcome.interrupted, 0u);
  ASSERT_EQ(outcome.failures.size(), 2u);
  EXPECT_EQ(outcome.failures[0], "backend db0 thread 5: cannot connect to send KILL QUERY: connect failed: Connection refused");
  EXPECT_EQ(outcome.failures[1], "backend db1 thread 7: KILL QUERY 7 failed: You are not owner of thread 7");
}

TEST(KillExecution, LostConnectionIsAFailure) {
  ScriptedShard shard;
  shard.failure(ChannelError::kLost);
  EXPECT_EQ(test::runToEnd(killQueryOn(shard, 9)), "KILL QUERY 9 failed: connection lost");
}

}  // namespace
}  // namespace sp::proxy
