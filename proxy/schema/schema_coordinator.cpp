#include "proxy/schema/schema_coordinator.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <limits>

#include "conf/config.hpp"
#include "proxy/core/background_gate.hpp"
#include "proxy/maps/shard_map_store.hpp"
#include "proxy/schema/schema_change_rows.hpp"
#include "proxy/schema/schema_errors.hpp"
#include "proxy/schema/schema_table_run.hpp"

namespace sp::proxy {

namespace {

// shapes_before: "role\x1fshape\x1e" per role.
std::string shapeOf(const std::string& shapes, const std::string& role) {
  size_t at = 0;
  while (at < shapes.size()) {
    size_t end = shapes.find('\x1e', at);
    if (end == std::string::npos) end = shapes.size();
    const std::string_view entry(shapes.data() + at, end - at);
    const size_t sep = entry.find('\x1f');
    if (sep != std::string_view::npos && entry.substr(0, sep) == role) return std::string(entry.substr(sep + 1));
    at = end + 1;
  }
  return {};
}

}  // namespace

SchemaCoordinator::SchemaCoordinator(ProxyContext& context) : context_(context) {}

SchemaCoordinator::~SchemaCoordinator() { stop(); }

void SchemaCoordinator::start() {
  std::vector<int64_t> unfinished;
  {
    std::lock_guard lock(mutex_);
    auto store = SchemaStore::open(context_.config().cache_path);
    if (store) {
      store_ = std::move(*store);
      if (auto all = store_->list()) {
        for (auto& r : *all) {
          if (r.state == SchemaChangeState::kRunning) unfinished.push_back(r.id);
          records_[r.id] = std::move(r);
        }
      } else {
        store_problem_ = all.error();
      }
    } else {
      store_problem_ = store.error();
    }
  }
  if (!store_problem_.empty()) spdlog::error("schema changes: {}", store_problem_);
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
  for (int64_t id : unfinished) {
    spdlog::warn("schema change {}: interrupted by a restart, resumed", id);
    asio::co_spawn(io_, runToEnd(id, true), asio::detached);  // in a fleet: once it holds the table's claim
  }
}

void SchemaCoordinator::stop() {
  // Changes stop where they are: their saved state makes the next start resume them.
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void SchemaCoordinator::save(SchemaChangeRecord& record) {
  record.updated_at = utcNowText();
  if (!store_) return;
  if (auto saved = store_->save(record); !saved) spdlog::error("schema change {}: {}", record.id, saved.error());
  publishLater(record.id);
}

awaitable<AdminReply> SchemaCoordinator::submit(routing::LogicalDdl ddl, std::string who) {
  co_return co_await asio::co_spawn(io_, begin(std::move(ddl), std::move(who)), asio::use_awaitable);
}

awaitable<AdminReply> SchemaCoordinator::execute(SchemaCommand command, std::string who) {
  switch (command.kind) {
    case SchemaCommand::Kind::kShow:
    case SchemaCommand::Kind::kShowOne:
      if (fleet_) co_return co_await asio::co_spawn(io_, showFleet(command), asio::use_awaitable);
      if (!command.proxy.empty()) co_return notInAFleet();
      {
        std::lock_guard lock(mutex_);
        co_return command.kind == SchemaCommand::Kind::kShow ? show() : showOne(command.id);
      }
    case SchemaCommand::Kind::kRetry:
      if (!command.proxy.empty()) {
        if (!fleet_) co_return notInAFleet();
        if (command.proxy != fleet_->proxyName()) {
          co_return co_await asio::co_spawn(io_, adopt(command.proxy, command.id, std::move(who)),
                                            asio::use_awaitable);
        }
      }
      co_return co_await asio::co_spawn(io_, retry(command.id, std::move(who)), asio::use_awaitable);
    case SchemaCommand::Kind::kDdl:
      break;
  }
  auto map = context_.shard_map.load();
  auto recognized = map ? routing::recognizeLogicalDdl(command.statement, *map) : std::nullopt;
  if (!recognized) {
    co_return AdminError{1105, "HY000",
                         "shardproxy admin: the admin port runs DDL on logical tables of the shard map only "
                         "(ALTER TABLE, CREATE/DROP INDEX, CREATE TABLE, TRUNCATE); run other DDL on a backend"};
  }
  if (!*recognized) co_return AdminError{9113, "HY000", recognized->error()};
  routing::LogicalDdl ddl = std::move(**recognized);
  co_return co_await asio::co_spawn(io_, begin(std::move(ddl), std::move(who)), asio::use_awaitable);
}

awaitable<AdminReply> SchemaCoordinator::begin(routing::LogicalDdl ddl, std::string who) {
  const auto& cfg = context_.config().schema;
  if (!store_) co_return schemaChangeRefused("schema changes are not available: " + store_problem_);
  auto map = context_.shard_map.load();
  const routing::TableRule* rule = map ? map->findTable(ddl.table) : nullptr;
  if (rule == nullptr) co_return schemaChangeRefused("no logical table " + ddl.table + " in the shard map in force");
  if (ddl.kind == routing::LogicalDdlKind::kTruncate && !cfg.allow_truncate) {
    co_return schemaChangeRefused(fmt::format("TRUNCATE of sharded table {} would empty all its physical tables; set "
                                  "schema.allow_truncate: true to allow it", ddl.table));
  }
  if (ddl.copy && !cfg.allow_copy) {
    co_return schemaChangeRefused(fmt::format("ALGORITHM=COPY rebuilds each physical table of {} and blocks its writes while it "
                                  "runs; set schema.allow_copy: true to allow it", ddl.table));
  }
  if (auto running = runningChangeOf(ddl.table)) co_return schemaChangeRefused(*running);
  std::optional<SchemaClaimTicket> claim;
  if (fleet_) {
    // One proxy of the fleet changes a table at a time; held to the change's end.
    auto claimed = co_await fleet_->claim(ddl.table, 0, ddl.statement, who);
    if (!claimed) co_return schemaChangeRefused(claimed.error().message);
    claim = *claimed;
  }
  SchemaChangeRecord record;
  {
    std::lock_guard lock(mutex_);
    record.table = ddl.table;
    record.kind = std::string(routing::toString(ddl.kind));
    record.statement = ddl.statement;
    record.created_by = who;
    record.created_at = utcNowText();
    for (auto& t : routing::physicalTargets(ddl, *rule)) {
      record.tables.push_back(TableChange{t.backend, t.table, t.role, TableChangeState::kPending, "", 0, ""});
    }
    save(record);
    records_[record.id] = record;
    if (claim) claims_[record.id] = *claim;
  }
  // Each role's definition before the change, from its first table: a
  // resumed change takes a table that no longer has it as changed.
  std::set<std::string> seen;
  std::string shapes;
  for (const auto& t : record.tables) {
    if (!seen.insert(t.role).second) continue;
    auto server = currentPrimary(context_, t.backend);
    if (!server) continue;
    auto shape = co_await readTableShape(*server, context_.config().server.max_packet_bytes, t.table);
    if (shape && !shape->empty()) shapes += t.role + '\x1f' + *shape + '\x1e';
  }
  {
    std::lock_guard lock(mutex_);
    auto& r = records_[record.id];
    r.shapes_before = shapes;
    save(r);
  }
  spdlog::warn("schema change {} of {} by {}: {} ({} physical tables)", record.id, record.table, who,
               record.statement.substr(0, 300), record.tables.size());
  if (cfg.async) {
    asio::co_spawn(io_, runToEnd(record.id, false), asio::detached);
    std::lock_guard lock(mutex_);
    co_return changesResult({ChangeRow{&records_[record.id], ownName(), "", ""}});
  }
  co_return co_await runToEnd(record.id, false);
}

// Why change `id` cannot be retried now, or nullopt (mutex_ held).
std::optional<AdminError> SchemaCoordinator::retryRefusal(int64_t id) {
  auto it = records_.find(id);
  if (it == records_.end()) return AdminError{1105, "HY000", fmt::format("shardproxy admin: no schema change {}", id)};
  const auto& r = it->second;
  if (r.state != SchemaChangeState::kFailed || active_.contains(id)) {
    return AdminError{1105, "HY000",
                      fmt::format("shardproxy admin: schema change {} is {}; only a failed change is retried", id,
                                  active_.contains(id) ? "running" : toString(r.state))};
  }
  for (const auto& [other, o] : records_) {
    if (other != id && o.table == r.table && o.state == SchemaChangeState::kRunning) {
      return schemaChangeRefused(fmt::format("schema change {} of {} is running", other, r.table));
    }
  }
  return std::nullopt;
}

awaitable<AdminReply> SchemaCoordinator::retry(int64_t id, std::string who) {
  {
    std::lock_guard lock(mutex_);
    if (auto refusal = retryRefusal(id)) co_return *refusal;
  }
  if (fleet_) {
    // The fleet's claim first; it may tell that another proxy adopted it.
    if (auto refusal = co_await claimToRetry(id)) co_return *refusal;
  }
  std::optional<AdminError> refusal;
  {
    std::lock_guard lock(mutex_);
    refusal = retryRefusal(id);  // again: it may have changed while claiming
    if (!refusal) {
      auto& r = records_[id];
      for (auto& t : r.tables) {
        if (t.state == TableChangeState::kFailed) {
          t.state = TableChangeState::kPending;
          t.error.clear();
        }
      }
      r.state = SchemaChangeState::kRunning;
      r.message = "retried by " + who;
      save(r);
    }
  }
  if (refusal) {
    if (fleet_) co_await releaseClaim(id);
    co_return *refusal;
  }
  spdlog::warn("schema change {}: retried by {}", id, who);
  co_return co_await runToEnd(id, true);
}

awaitable<AdminReply> SchemaCoordinator::runToEnd(int64_t id, bool resuming) {
  std::string statement;
  {
    std::lock_guard lock(mutex_);
    if (!active_.insert(id).second) co_return outcome(id);
    statement = records_[id].statement;
  }
  if (fleet_ && !holdsClaim(id)) {
    // A change resumed at start-up: once this proxy holds its table's claim
    // again, unless another proxy adopted it meanwhile.
    if (co_await claimToResume(id) == ResumeClaim::kAdopted) {
      std::lock_guard lock(mutex_);
      active_.erase(id);
      co_return outcome(id);
    }
  }
  auto map = context_.shard_map.load();
  auto recognized = map ? routing::recognizeLogicalDdl(statement, *map) : std::nullopt;
  if (recognized && *recognized) {
    const routing::LogicalDdl ddl = **recognized;
    co_await runTables(id, ddl, resuming);
  }
  std::unique_lock lock(mutex_);
  auto& r = records_[id];
  const TableCounts c = countsOf(r);
  if (!recognized || !*recognized) {
    r.state = SchemaChangeState::kFailed;
    r.message = "the statement is no longer a change of a logical table of the map in force";
  } else {
    r.state = c.failed == 0 && c.pending == 0 ? SchemaChangeState::kDone : SchemaChangeState::kFailed;
  }
  if (auto halted = halted_.find(id); halted != halted_.end()) {
    if (r.state == SchemaChangeState::kFailed) r.message = halted->second;
    halted_.erase(halted);
  }
  if (r.state == SchemaChangeState::kDone) {
    // An adopted change keeps saying whose it was (the original's record names this one).
    const std::string origin = r.message.starts_with("adopted from ") ? "; " + r.message : "";
    r.message = fmt::format("{} tables changed, {} absent{}", c.changed, c.absent, origin);
    spdlog::warn("schema change {} of {}: done ({:.3f} s of ALTER over {} tables)", id, r.table, c.seconds,
                 r.tables.size());
  } else {
    spdlog::error("schema change {} of {}: failed: {}", id, r.table, r.message);
  }
  save(r);
  active_.erase(id);
  lock.unlock();
  if (fleet_) co_await releaseClaim(id);
  lock.lock();
  co_return outcome(id);
}

awaitable<void> SchemaCoordinator::runTables(int64_t id, const routing::LogicalDdl& ddl, bool resuming) {
  std::map<std::string, std::shared_ptr<std::vector<size_t>>> queues;
  std::optional<size_t> first;
  {
    std::lock_guard lock(mutex_);
    const auto& r = records_[id];
    for (size_t i = 0; i < r.tables.size(); ++i) {
      if (r.tables[i].state != TableChangeState::kPending) continue;
      if (!first) {
        first = i;
        continue;
      }
      auto& q = queues[r.tables[i].backend];
      if (!q) q = std::make_shared<std::vector<size_t>>();
      q->push_back(i);
    }
  }
  if (!first) co_return;
  // The first table alone: a change the server cannot make online is
  // refused with nothing else changed.
  if (!co_await stillClaimed(id)) co_return;
  co_await runOne(id, *first, ddl, resuming);
  {
    std::lock_guard lock(mutex_);
    if (records_[id].tables[*first].state == TableChangeState::kFailed) co_return;
  }
  struct Latch {
    explicit Latch(asio::io_context& io) : timer(io, asio::steady_timer::time_point::max()) {}
    asio::steady_timer timer;
    size_t left = 0;
  };
  auto latch = std::make_shared<Latch>(io_);
  const uint32_t per_backend = std::max<uint32_t>(1, context_.config().schema.parallel_per_backend);
  for (auto& [backend, queue] : queues) {
    for (uint32_t k = 0; k < per_backend && k < queue->size(); ++k) {
      ++latch->left;
      asio::co_spawn(io_, [this, id, queue, &ddl, resuming, latch]() -> awaitable<void> {
        co_await runBackendQueue(id, queue, ddl, resuming);
        if (--latch->left == 0) latch->timer.cancel();
      }, asio::detached);
    }
  }
  if (latch->left > 0) co_await latch->timer.async_wait(kNoThrow);
}

awaitable<void> SchemaCoordinator::runBackendQueue(int64_t id, std::shared_ptr<std::vector<size_t>> queue,
                                                   const routing::LogicalDdl& ddl, bool resuming) {
  while (!queue->empty()) {
    {
      // A failed table stops the change: nothing more starts (RETRY SCHEMA CHANGE goes on).
      std::lock_guard lock(mutex_);
      if (countsOf(records_[id]).failed > 0 || halted_.contains(id)) co_return;
    }
    if (!co_await stillClaimed(id)) co_return;
    const size_t index = queue->front();
    queue->erase(queue->begin());
    co_await runOne(id, index, ddl, resuming);
  }
}

awaitable<void> SchemaCoordinator::runOne(int64_t id, size_t index, const routing::LogicalDdl& ddl, bool resuming) {
  TableChange target;
  std::string before, after_from_backend, after_from_table;
  {
    std::lock_guard lock(mutex_);
    const auto& r = records_[id];
    target = r.tables[index];
    before = shapeOf(r.shapes_before, target.role);
    for (const auto& t : r.tables) {
      if (t.role == target.role && (t.state == TableChangeState::kDone || t.state == TableChangeState::kAlready)) {
        after_from_backend = t.backend;
        after_from_table = t.table;
        break;
      }
    }
  }
  // Background work yields: while the backend's clients are slow or its
  // replicas behind, wait (at most background.max_pause_ms) before the ALTER.
  auto paused = co_await yieldToForeground(context_.background, target.backend, fmt::format("schema change {}", id),
                                           [this, id](const std::string& why) {
                                             std::lock_guard lock(mutex_);
                                             auto& r = records_[id];
                                             r.message = "paused: " + why;
                                             save(r);
                                           });
  if (paused.count() > 0) {
    std::lock_guard lock(mutex_);
    auto& r = records_[id];
    if (r.message.starts_with("paused: ")) r.message.clear();
  }
  TableRunResult result;
  auto server = currentPrimary(context_, target.backend);
  if (!server) {
    result.error = "backend " + target.backend + " is not in the configuration";
  } else {
    TableRunInput input;
    input.ddl = &ddl;
    input.server = *server;
    input.max_packet_bytes = context_.config().server.max_packet_bytes;
    input.table = target.table;
    input.role = target.role;
    input.lock_wait_timeout_s = context_.config().schema.lock_wait_timeout_s;
    input.resuming = resuming;
    input.shape_before = before;
    if (resuming && !after_from_table.empty()) {
      // The changed definition, from a table this change already did.
      if (auto done_server = currentPrimary(context_, after_from_backend)) {
        auto shape = co_await readTableShape(*done_server, input.max_packet_bytes, after_from_table);
        if (shape) input.shape_after = *shape;
      }
    }
    result = co_await runTableChange(input);
  }
  std::lock_guard lock(mutex_);
  auto& r = records_[id];
  auto& t = r.tables[index];
  t.state = result.state;
  t.algorithm = result.algorithm;
  t.seconds = result.seconds;
  t.error = result.error;
  if (t.state == TableChangeState::kFailed) {
    if (r.message.empty() || r.message.starts_with("retried by")) {
      r.message = fmt::format("{}.{}: {}", t.backend, t.table, t.error);
    }
    spdlog::error("schema change {}: {}.{}: {}", id, t.backend, t.table, t.error);
  } else {
    spdlog::info("schema change {}: {}.{} {} ({}{:.3f} s)", id, t.backend, t.table, toString(t.state),
                 t.algorithm.empty() ? "" : t.algorithm + ", ", t.seconds);
  }
  save(r);
}

AdminReply SchemaCoordinator::outcome(int64_t id) {
  const auto& r = records_[id];
  const TableCounts c = countsOf(r);
  if (r.state == SchemaChangeState::kAdopted) {
    return AdminError{kSchemaChangeFailed, "HY000",
                      fmt::format("shardproxy: schema change {} of {} was {} (SHOW SCHEMA CHANGES)", id, r.table,
                                  r.message)};
  }
  if (r.state == SchemaChangeState::kFailed) {
    if (c.changed == 0) {
      return AdminError{kSchemaChangeRefused, "HY000",
                        fmt::format("shardproxy: schema change {} of {} changed nothing: {} (SHOW SCHEMA CHANGE {} on "
                                    "the admin port lists its tables)", id, r.table, r.message, id)};
    }
    return AdminError{kSchemaChangeFailed, "HY000",
                      fmt::format("shardproxy: schema change {} of {} failed: {}; {} of {} tables changed, {} not yet: "
                                  "fix the cause and RETRY SCHEMA CHANGE {} on the admin port (SHOW SCHEMA CHANGE {} "
                                  "lists them; SHOW SCHEMA DRIFT shows the difference meanwhile)",
                                  id, r.table, r.message, c.changed, r.tables.size(), c.pending + c.failed, id, id)};
  }
  return changesResult({ChangeRow{&r, ownName(), "", ""}});
}

AdminReply SchemaCoordinator::show() {
  std::vector<ChangeRow> rows;
  for (const auto& [id, r] : records_) rows.push_back(ChangeRow{&r, ownName(), "", ""});
  return changesResult(rows);
}

AdminReply SchemaCoordinator::showOne(int64_t id) {
  auto it = records_.find(id);
  if (it == records_.end()) return AdminError{1105, "HY000", fmt::format("shardproxy admin: no schema change {}", id)};
  return tablesResult(it->second);
}

std::string SchemaCoordinator::ownName() const { return fleet_ ? fleet_->proxyName() : std::string(); }

std::optional<std::string> SchemaCoordinator::runningChangeOf(const std::string& table) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : records_) {
    if (r.table == table && r.state == SchemaChangeState::kRunning) {
      return fmt::format("schema change {} of {} is running (SHOW SCHEMA CHANGES); one change of a table at a time",
                         id, table);
    }
  }
  return std::nullopt;
}

}  // namespace sp::proxy
