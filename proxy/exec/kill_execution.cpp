#include "proxy/exec/kill_execution.hpp"

#include <fmt/format.h>

namespace sp::proxy {

namespace {
constexpr uint16_t kUnknownThread = 1094;  // ER_NO_SUCH_THREAD: the query ended meanwhile
}  // namespace

awaitable<std::string> killQueryOn(ShardChannel& channel, uint32_t thread_id) {
  const std::string sql = fmt::format("KILL QUERY {}", thread_id);
  channel.sendQuery(sql);
  const bool sent = co_await channel.flush();
  if (!sent) co_return fmt::format("{} failed: connection lost", sql);
  ShardAnswer answer = co_await readAnswer(channel);
  if (answer.ok || (answer.error && answer.error->error_code == kUnknownThread)) co_return std::string();
  if (answer.error) co_return fmt::format("{} failed: {}", sql, answer.error->message);
  co_return fmt::format("{} failed: connection lost", sql);
}

awaitable<std::string> killThread(const KillTarget& target, const KillChannelOpener& open) {
  auto channel = co_await open(target.backend);
  if (!channel) co_return fmt::format("cannot connect to send KILL QUERY: {}", channel.error());
  co_return co_await killQueryOn(**channel, target.thread_id);
}

awaitable<KillOutcome> executeKill(std::span<const KillTarget> targets, const KillChannelOpener& open) {
  KillOutcome outcome;
  for (const auto& target : targets) {
    std::string failure = co_await killThread(target, open);
    if (failure.empty()) ++outcome.interrupted;
    else outcome.failures.push_back(fmt::format("backend {} thread {}: {}", target.backend.name, target.thread_id, failure));
  }
  co_return outcome;
}

}  // namespace sp::proxy
