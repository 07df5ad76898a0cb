#include "proxy/lifecycle/partition_upkeep.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

#include "conf/config.hpp"
#include "routing/map/partition_layout.hpp"

namespace sp::proxy {

awaitable<std::expected<EnsureOutcome, std::string>> runPartitionUpkeep(ProxyContext& context, std::string_view table,
                                                                        uint32_t ahead, routing::MonthIndex now,
                                                                        std::string who) {
  // The periodic upkeep (who "upkeep") is background work; a run at start-up or on request is not.
  auto outcome = co_await ensurePartitions(context, table, ahead, now, who == "upkeep");
  auto& stats = context.lifecycle;
  stats.last_upkeep_unix_s.store(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  if (!outcome) {
    stats.upkeep_runs_failed.fetch_add(1);
    spdlog::warn("partition upkeep ({}): {}", who, outcome.error());
    co_return outcome;
  }
  for (const auto& row : outcome->result.rows) {
    const std::string& result = row.back().value_or("");
    if (result == "unchanged") continue;
    auto level = result == "added" ? spdlog::level::info : spdlog::level::warn;
    spdlog::log(level, "partition upkeep ({}): {} shard {} ({} on {}): {} {}", who, *row[0], *row[1], *row[3], *row[2],
                result, row[4].value_or(""));
  }
  stats.partitions_created.fetch_add(outcome->partitions_added);
  stats.missing_months.store(outcome->missing_months);
  stats.pmax_rows.store(outcome->pmax_rows);
  (outcome->failed_shards ? stats.upkeep_runs_failed : stats.upkeep_runs_ok).fetch_add(1);
  auto level = outcome->failed_shards ? spdlog::level::warn
               : outcome->partitions_added ? spdlog::level::info
                                           : spdlog::level::debug;
  spdlog::log(level, "partition upkeep ({}): {} shards, {} partitions added through {}, {} failed, {} rows in pmax", who,
              outcome->result.rows.size(), outcome->partitions_added, routing::formatMonth(now + ahead),
              outcome->failed_shards, outcome->pmax_rows);
  co_return outcome;
}

void PartitionUpkeep::start() {
  if (context_.config().partitions.check_every_s == 0 || thread_.joinable()) return;
  asio::co_spawn(io_, loop(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
  spdlog::info("partition upkeep: every {} s, {} months ahead", context_.config().partitions.check_every_s,
               context_.config().partitions.ahead);
}

void PartitionUpkeep::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] { io_.stop(); });
  thread_.join();
}

awaitable<void> PartitionUpkeep::loop() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    if (context_.shutting_down.load()) co_return;
    co_await runPartitionUpkeep(context_, {}, context_.config().partitions.ahead, lifecycleMonth(std::nullopt), "upkeep");
    timer.expires_after(std::chrono::seconds(context_.config().partitions.check_every_s));
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

}  // namespace sp::proxy
