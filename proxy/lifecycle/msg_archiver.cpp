#include "proxy/lifecycle/msg_archiver.hpp"

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/core/background_gate.hpp"
#include "proxy/lifecycle/archive_store.hpp"
#include "proxy/lifecycle/lifecycle_links.hpp"
#include "proxy/lifecycle/partition_admin.hpp"
#include "routing/archive_sql.hpp"
#include "routing/conditions.hpp"

namespace sp::proxy {

namespace {

using routing::KeyTuple;
using Row = std::vector<std::optional<std::string>>;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kIntegerTypes[] = {"tinyint", "smallint", "mediumint", "int", "bigint"};

std::string joinKey(const KeyTuple& key) {
  std::string out;
  for (const auto& v : key) out += (out.empty() ? "" : ",") + v;
  return out;
}

KeyTuple splitKey(const std::string& text) {
  KeyTuple out;
  if (text.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string formatCutoff(const routing::DateTimeValue& v) {
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", v.date.year, v.date.month, v.date.day, v.hour, v.minute,
                     v.second) +
         (v.microsecond ? fmt::format(".{:06}", v.microsecond) : std::string());
}

// The primary key's columns of `table`, refused unless all are integers.
awaitable<std::expected<std::vector<std::string>, std::string>> integerKey(LifecycleLinks& links,
                                                                          const std::string& backend,
                                                                          const std::string& table) {
  auto rows = co_await links.rows(
      backend, fmt::format("SELECT k.COLUMN_NAME, c.DATA_TYPE FROM information_schema.KEY_COLUMN_USAGE k "
                           "JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = k.TABLE_SCHEMA AND "
                           "c.TABLE_NAME = k.TABLE_NAME AND c.COLUMN_NAME = k.COLUMN_NAME "
                           "WHERE k.TABLE_SCHEMA = DATABASE() AND k.TABLE_NAME = '{}' AND k.CONSTRAINT_NAME = 'PRIMARY' "
                           "ORDER BY k.ORDINAL_POSITION",
                           table));
  if (!rows) co_return std::unexpected(rows.error());
  if (rows->empty()) co_return std::unexpected(fmt::format("{} has no primary key (or does not exist)", table));
  std::vector<std::string> columns;
  for (const auto& r : *rows) {
    std::string type = r[1].value_or("");
    if (std::find(std::begin(kIntegerTypes), std::end(kIntegerTypes), type) == std::end(kIntegerTypes)) {
      co_return std::unexpected(fmt::format("{}: primary-key column {} is {}; the archive moves batches by integer "
                                            "key ranges only", table, r[0].value_or(""), type));
    }
    columns.push_back(r[0].value_or(""));
  }
  co_return columns;
}

// One shard's run; `p` is saved after every batch.
class ShardMove {
 public:
  ShardMove(ProxyContext& context, LifecycleLinks& links, ArchiveStore& store, ArchiveProgress& p,
            const std::string& backend, const routing::TableRule& rule)
      : context_(context), links_(links), store_(store), p_(p), backend_(backend), time_column_(rule.archive_time_column),
        rule_(rule) {}

  awaitable<void> run() {
    if (auto err = co_await prepare(); !err.empty()) co_return finish("failed", err);
    const auto& cfg = context_.config().archive;
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (;;) {
      // Background work yields while the backend's clients are slow or its replicas behind.
      auto waited = co_await yieldToForeground(context_.background, backend_, "archive " + p_.table,
                                               [this](const std::string& why) {
                                                 p_.message = "paused: " + why;
                                                 (void)store_.save(p_);
                                               });
      if (waited.count() > 0 && p_.message.starts_with("paused: ")) p_.message.clear();
      auto started = Clock::now();
      KeyTuple cursor = splitKey(p_.cursor);
      auto select = routing::archiveBatchSql(p_.source, p_.target, key_, time_column_, p_.cutoff, cursor, {},
                                             cfg.batch_rows, order_);
      auto keys = co_await links_.rows(backend_, select.select_keys);
      if (!keys) co_return finish("failed", keys.error());
      if (keys->empty()) co_return finish("done", "");
      KeyTuple last;
      for (const auto& v : keys->back()) last.push_back(v.value_or(""));
      for (const auto& v : last) {
        if (!routing::isIntegerText(v)) co_return finish("failed", "a key value is not an integer: " + v);
      }
      auto batch = routing::archiveBatchSql(p_.source, p_.target, key_, time_column_, p_.cutoff, cursor, last,
                                            cfg.batch_rows, order_);
      auto moved = co_await moveBatch(batch);
      if (!moved) co_return finish("failed", moved.error());
      p_.cursor = joinKey(last);
      p_.rows += *moved;
      p_.batches += 1;
      p_.seconds += std::chrono::duration<double>(Clock::now() - started).count();
      context_.lifecycle.archived_rows.fetch_add(*moved);
      context_.lifecycle.archive_batches.fetch_add(1);
      if (auto saved = store_.save(p_); !saved) co_return finish("failed", "progress not saved: " + saved.error());
      if (cfg.pause_ms) {
        pause.expires_after(std::chrono::milliseconds(cfg.pause_ms));
        co_await pause.async_wait(kNoThrow);
      }
      if (context_.shutting_down.load()) co_return finish("running", "stopped by shutdown; run again to resume");
    }
  }

 private:
  awaitable<std::string> prepare() {
    // Same structure as the hot table (columns, keys, row format).
    auto created = co_await links_.run(backend_, fmt::format("CREATE TABLE IF NOT EXISTS `{}` LIKE `{}`", p_.target, p_.source));
    if (!created) co_return created.error();
    auto key = co_await integerKey(links_, backend_, p_.source);
    if (!key) co_return key.error();
    key_ = std::move(*key);
    // Primary key (conversation, seq): move each conversation's oldest rows only (routing/archive_sql.hpp).
    if (key_.size() == 2 && routing::equalsIgnoreCase(key_[0], rule_.key) &&
        routing::equalsIgnoreCase(key_[1], rule_.archive_seq_column)) {
      order_ = routing::KeyOrder{rule_.key, rule_.archive_seq_column};
    }
    co_return std::string();
  }

  // INSERT ... SELECT and DELETE in one transaction; equal counts commit,
  // different counts (a concurrent write inside the range) roll back and retry.
  awaitable<std::expected<uint64_t, std::string>> moveBatch(const routing::ArchiveBatchSql& batch) {
    for (uint32_t attempt = 0;; ++attempt) {
      if (auto begun = co_await links_.run(backend_, "START TRANSACTION"); !begun) co_return std::unexpected(begun.error());
      auto inserted = co_await links_.run(backend_, batch.insert);
      std::expected<protocol::OkPacket, std::string> deleted = std::unexpected(std::string());
      if (inserted) deleted = co_await links_.run(backend_, batch.remove);
      if (inserted && deleted && inserted->affected_rows == deleted->affected_rows) {
        if (auto done = co_await links_.run(backend_, "COMMIT"); !done) co_return std::unexpected(done.error());
        co_return inserted->affected_rows;
      }
      co_await links_.run(backend_, "ROLLBACK");
      if (!inserted) co_return std::unexpected(inserted.error());
      if (!deleted) co_return std::unexpected(deleted.error());
      p_.retries += 1;
      context_.lifecycle.archive_retries.fetch_add(1);
      spdlog::warn("archive {} shard {}: batch after [{}] inserted {} rows but deleted {}; rolled back (attempt {})",
                   p_.table, p_.shard, p_.cursor, inserted->affected_rows, deleted->affected_rows, attempt + 1);
      if (attempt >= context_.config().archive.max_retries) {
        co_return std::unexpected(fmt::format("the batch counts differed {} times (archive.max_retries)", attempt + 1));
      }
    }
  }

  void finish(const char* state, const std::string& message) {
    p_.state = state;
    p_.message = message;
    if (auto saved = store_.save(p_); !saved) p_.message += " (progress not saved: " + saved.error() + ")";
    auto level = p_.state == "failed" ? spdlog::level::warn : spdlog::level::info;
    spdlog::log(level, "archive {} shard {} ({} -> {} on {}): {} rows in {} batches, {:.2f} s, {} {}", p_.table,
                p_.shard, p_.source, p_.target, backend_, p_.rows, p_.batches, p_.seconds, p_.state, p_.message);
  }

  ProxyContext& context_;
  LifecycleLinks& links_;
  ArchiveStore& store_;
  ArchiveProgress& p_;
  const std::string& backend_;
  const std::string& time_column_;
  const routing::TableRule& rule_;
  std::vector<std::string> key_;
  std::optional<routing::KeyOrder> order_;
};

std::string rate(const ArchiveProgress& p) {
  return p.seconds > 0 ? fmt::format("{:.0f}", static_cast<double>(p.rows) / p.seconds) : std::string("-");
}

}  // namespace

awaitable<std::expected<LocalResult, std::string>> archiveRows(ProxyContext& context, const LifecycleCommand& command) {
  auto map = context.shard_map.load();
  const routing::TableRule* rule = map ? map->findTable(command.table) : nullptr;
  if (!rule || rule->archive_template.empty()) {
    co_return std::unexpected(fmt::format("shardproxy admin: table '{}' has no `archive: {{table: ...}}` in the shard "
                                          "map (ARCHIVE ... BEFORE drops month partitions of month-partitioned tables)",
                                          command.table));
  }
  // OLDER THAN counts whole days: the same command on the same day has the
  // same cutoff, so it resumes an unfinished run.
  std::string cutoff = command.before ? formatCutoff(*command.before)
                                      : routing::cutoffDaysBefore(lifecycleToday(command.as_of), command.days);
  auto store = ArchiveStore::open(context.config().cache_path);
  if (!store) co_return std::unexpected("shardproxy admin: " + store.error());
  LifecycleLinks links(context);
  LocalResult r;
  r.columns = {"table", "shard", "backend", "source", "target", "cutoff", "rows", "batches", "retries",
               "seconds", "rows_per_s", "state", "message"};
  for (const auto& shard : rule->shards) {
    auto found = (*store)->unfinished("move", rule->name, shard.name, cutoff);
    if (!found) co_return std::unexpected("shardproxy admin: archive progress: " + found.error());
    ArchiveProgress p = found->value_or(ArchiveProgress{});
    if (p.id == 0) {
      p = ArchiveProgress{0, "move", rule->name, shard.name, shard.physical_table, shard.archive_table, cutoff};
    }
    p.state = "running";
    if (auto saved = (*store)->save(p); !saved) co_return std::unexpected("shardproxy admin: " + saved.error());
    ShardMove move(context, links, **store, p, shard.backend, *rule);
    co_await move.run();
    r.rows.push_back(Row{p.table, p.shard, shard.backend, p.source, p.target, p.cutoff, std::to_string(p.rows),
                         std::to_string(p.batches), std::to_string(p.retries), fmt::format("{:.3f}", p.seconds), rate(p),
                         p.state, p.message.empty() ? std::nullopt : std::optional(p.message)});
  }
  co_return r;
}

std::expected<LocalResult, std::string> showArchives(const ProxyContext& context) {
  auto store = ArchiveStore::open(context.config().cache_path);
  if (!store) return std::unexpected("shardproxy admin: " + store.error());
  auto runs = (*store)->list();
  if (!runs) return std::unexpected("shardproxy admin: " + runs.error());
  LocalResult r;
  r.columns = {"id", "kind", "table", "shard", "source", "target", "cutoff", "cursor", "rows", "batches",
               "retries", "seconds", "rows_per_s", "state", "message", "started_at", "updated_at"};
  for (const auto& p : *runs) {
    r.rows.push_back(Row{std::to_string(p.id), p.kind, p.table, p.shard, p.source, p.target, p.cutoff,
                         p.cursor.empty() ? std::string("-") : p.cursor, std::to_string(p.rows),
                         std::to_string(p.batches), std::to_string(p.retries), fmt::format("{:.3f}", p.seconds),
                         rate(p), p.state, p.message, p.started_at, p.updated_at});
  }
  return r;
}

}  // namespace sp::proxy
