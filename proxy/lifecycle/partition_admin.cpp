#include "proxy/lifecycle/partition_admin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>

#include "conf/config.hpp"
#include "proxy/core/background_gate.hpp"
#include "routing/conditions.hpp"
#include "routing/map/partition_layout.hpp"

namespace sp::proxy {

namespace {

using routing::MonthIndex;
using routing::PartitionRow;
using Row = std::vector<std::optional<std::string>>;

uint64_t number(const std::optional<std::string>& text) {
  if (!text) return 0;
  uint64_t v = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return v;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// Exact rows of one partition (TABLE_ROWS is InnoDB's estimate).
awaitable<std::expected<uint64_t, std::string>> countPartition(LifecycleLinks& links, const PartitionTarget& t,
                                                               const std::string& partition) {
  auto rows = co_await links.rows(t.backend, fmt::format("SELECT COUNT(*) FROM `{}` PARTITION (`{}`)", t.physical, partition));
  if (!rows) co_return std::unexpected(rows.error());
  if (rows->size() != 1 || rows->front().size() != 1) co_return std::unexpected(std::string("unexpected COUNT(*) answer"));
  co_return number(rows->front()[0]);
}

std::string monthText(const routing::MonthPartition& p) {
  using routing::formatMonth;
  if (!p.last) return p.first ? ">= " + formatMonth(*p.first) : std::string("all");
  if (!p.first) return "<= " + formatMonth(*p.last);
  if (*p.first == *p.last) return formatMonth(*p.last);
  return formatMonth(*p.first) + ".." + formatMonth(*p.last);
}

std::string statusOf(const routing::MonthPartition& p, MonthIndex now, uint64_t pmax_rows) {
  if (!p.last) {
    return pmax_rows == 0 ? std::string("catch-all (empty)")
                          : fmt::format("catch-all: {} rows of months without a partition", pmax_rows);
  }
  if (*p.last < now) return "past";
  if (p.first && *p.first > now) return "future";
  return "current";
}

Row errorRow(const PartitionTarget& t, const std::string& message) {
  return Row{t.table, t.shard, t.backend, t.physical, std::nullopt, std::nullopt, std::nullopt,
             std::nullopt, std::nullopt, "error: " + message};
}

}  // namespace

awaitable<std::expected<std::vector<PartitionRow>, std::string>> readPartitions(LifecycleLinks& links,
                                                                                const PartitionTarget& t) {
  // Physical names are validated identifiers ([A-Za-z0-9_$]): safe inside quotes.
  auto rows = co_await links.rows(
      t.backend, fmt::format("SELECT PARTITION_NAME, PARTITION_DESCRIPTION, TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH "
                             "FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}' "
                             "ORDER BY PARTITION_ORDINAL_POSITION",
                             t.physical));
  if (!rows) co_return std::unexpected(rows.error());
  if (rows->empty()) co_return std::unexpected(fmt::format("table {} does not exist on backend {}", t.physical, t.backend));
  std::vector<PartitionRow> out;
  for (auto& r : *rows) {
    if (r.size() != 5) co_return std::unexpected(std::string("unexpected information_schema.PARTITIONS shape"));
    out.push_back({r[0].value_or(""), r[1].value_or(""), number(r[2]), number(r[3]), number(r[4])});
  }
  co_return out;
}

std::expected<std::vector<PartitionTarget>, std::string> partitionTargets(const routing::CompiledShardMap* map,
                                                                         std::string_view table) {
  std::vector<PartitionTarget> out;
  std::string qualifying;
  bool named_found = false;
  if (map) {
    for (const auto& t : map->tables()) {
      if (!t.month) continue;
      qualifying += (qualifying.empty() ? "" : ", ") + t.name;
      if (!table.empty() && !routing::equalsIgnoreCase(t.name, table)) continue;
      named_found = true;
      for (const auto& s : t.shards) out.push_back({t.name, s.name, s.physical_table, s.backend});
    }
  }
  if (!table.empty() && !named_found) {
    return std::unexpected(fmt::format("shardproxy admin: '{}' is not a month-partitioned table of the shard map "
                                       "(month-partitioned: {})",
                                       table, qualifying.empty() ? "none" : qualifying));
  }
  return out;
}

routing::CivilDate lifecycleToday(const std::optional<routing::DateTimeValue>& as_of) {
  if (as_of) return as_of->date;
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return {utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday};
}

MonthIndex lifecycleMonth(const std::optional<routing::DateTimeValue>& as_of) {
  return routing::monthIndexOf(lifecycleToday(as_of));
}

awaitable<std::expected<LocalResult, std::string>> showPartitions(ProxyContext& context, std::string_view table,
                                                                  MonthIndex now) {
  auto targets = partitionTargets(context.shard_map.load().get(), table);
  if (!targets) co_return std::unexpected(targets.error());
  LocalResult r;
  r.columns = {"table", "shard", "backend", "physical_table", "partition", "month",
               "rows", "data_bytes", "index_bytes", "status"};
  LifecycleLinks links(context);
  const uint32_t ahead = context.config().partitions.ahead;
  for (const auto& t : *targets) {
    auto rows = co_await readPartitions(links, t);
    if (!rows) {
      r.rows.push_back(errorRow(t, rows.error()));
      continue;
    }
    auto layout = routing::readPartitionLayout(*rows);
    if (!layout) {
      r.rows.push_back(errorRow(t, layout.error()));
      continue;
    }
    for (const auto& p : layout->partitions) {
      uint64_t shown_rows = p.row.rows;
      if (!p.last) {
        // Rows in pmax are late or odd writes: counted exactly.
        auto n = co_await countPartition(links, t, p.row.name);
        if (!n) {
          r.rows.push_back(errorRow(t, n.error()));
          continue;
        }
        shown_rows = *n;
      }
      r.rows.push_back(Row{t.table, t.shard, t.backend, t.physical, p.row.name, monthText(p),
                           std::to_string(shown_rows), std::to_string(p.row.data_bytes),
                           std::to_string(p.row.index_bytes), statusOf(p, now, shown_rows)});
    }
    for (MonthIndex m : routing::missingMonths(*layout, now, ahead)) {
      r.rows.push_back(Row{t.table, t.shard, t.backend, t.physical, std::nullopt, routing::formatMonth(m),
                           std::nullopt, std::nullopt, std::nullopt,
                           fmt::format("missing (partitions.ahead = {}; its rows would land in pmax)", ahead)});
    }
  }
  co_return r;
}

awaitable<std::expected<EnsureOutcome, std::string>> ensurePartitions(ProxyContext& context, std::string_view table,
                                                                      uint32_t ahead, MonthIndex now, bool background) {
  auto targets = partitionTargets(context.shard_map.load().get(), table);
  if (!targets) co_return std::unexpected(targets.error());
  EnsureOutcome out;
  out.result.columns = {"table", "shard", "backend", "physical_table", "added", "through", "pmax_rows", "result"};
  LifecycleLinks links(context);
  for (const auto& t : *targets) {
    auto fail = [&](const std::string& message) {
      ++out.failed_shards;
      out.missing_months += ahead + 1;
      out.result.rows.push_back(Row{t.table, t.shard, t.backend, t.physical, std::string("-"), std::nullopt,
                                    std::nullopt, "error: " + message});
    };
    auto rows = co_await readPartitions(links, t);
    if (!rows) {
      fail(rows.error());
      continue;
    }
    auto layout = routing::readPartitionLayout(*rows);
    if (!layout) {
      fail(layout.error());
      continue;
    }
    std::string sql = routing::reorganizeStatement(t.physical, *layout, now, ahead);
    std::string added = "-";
    if (!sql.empty() && background) co_await yieldToForeground(context.background, t.backend, "partition upkeep");
    if (!sql.empty()) {
      auto done = co_await links.run(t.backend, sql);
      if (!done) {
        fail(done.error());
        continue;
      }
      added.clear();
      for (MonthIndex m = layout->covered_until.value_or(now); m <= now + MonthIndex(ahead); ++m) {
        added += (added.empty() ? "" : ",") + routing::partitionName(m);
        ++out.partitions_added;
      }
    }
    auto pmax = co_await countPartition(links, t, layout->maxvalue()->row.name);
    if (!pmax) {
      fail(pmax.error());
      continue;
    }
    out.pmax_rows += *pmax;
    MonthIndex through = std::max(now + MonthIndex(ahead), layout->covered_until.value_or(now) - 1);
    out.result.rows.push_back(Row{t.table, t.shard, t.backend, t.physical, added, routing::formatMonth(through),
                                  std::to_string(*pmax), std::string(sql.empty() ? "unchanged" : "added")});
  }
  co_return out;
}

}  // namespace sp::proxy
