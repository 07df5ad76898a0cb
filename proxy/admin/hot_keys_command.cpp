#include "proxy/admin/hot_keys_command.hpp"

#include <fmt/format.h>

#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

LocalResult showHotKeys(const ProxyContext& context, uint64_t limit) {
  LocalResult r;
  r.columns = {"table",          "key_value",        "shard",           "backend",        "statements_per_s",
               "writes_per_s",   "shard_share_pct",  "writes_in_flight", "writes_waiting", "hot_key_concurrency",
               "hot_key_max_per_second"};
  const auto settings = context.hot_keys.settings();
  const auto rows = context.hot_key_stats.top(limit == 0 ? kHotKeysDefaultLimit : limit);
  for (const auto& row : rows) {
    if (row.statements_per_s < 0.005) continue;  // counted long ago: decayed to nothing
    const auto load = context.hot_keys.load(fmt::format("{}:{}", row.table, row.key));
    r.rows.push_back({row.table, std::to_string(row.key), row.shard, row.backend,
                      fmt::format("{:.2f}", row.statements_per_s), fmt::format("{:.2f}", row.writes_per_s),
                      fmt::format("{:.1f}", row.share() * 100), std::to_string(load.active),
                      std::to_string(load.waiting), std::to_string(settings.concurrency),
                      std::to_string(context.hot_key_pacer.maxPerSecond())});
  }
  return r;
}

}  // namespace sp::proxy
