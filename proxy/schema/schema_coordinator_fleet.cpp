// SchemaCoordinator in a fleet (docs/admin.md, "Schema changes in a fleet"):
// the table claims, the records put to etcd, adoption of another proxy's
// change, and SHOW SCHEMA CHANGES across the fleet.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "proxy/maps/shard_map_store.hpp"
#include "proxy/schema/schema_change_rows.hpp"
#include "proxy/schema/schema_coordinator.hpp"
#include "proxy/schema/schema_errors.hpp"

namespace sp::proxy {

namespace {

// How often a change resumed at start-up tries its claim again, and how often
// an unpublished record is put again, while etcd does not answer.
constexpr auto kClaimRetry = std::chrono::seconds(1);
constexpr auto kPublishRetry = std::chrono::seconds(1);

std::string qualified(const std::string& proxy, int64_t id) { return proxy + "/" + std::to_string(id); }

}  // namespace

AdminError SchemaCoordinator::notInAFleet() {
  return AdminError{1105, "HY000", "shardproxy admin: FROM PROXY names a proxy of a fleet; this proxy has no fleet"};
}

bool SchemaCoordinator::holdsClaim(int64_t id) {
  std::lock_guard lock(mutex_);
  return claims_.contains(id);
}

awaitable<SchemaCoordinator::ResumeClaim> SchemaCoordinator::claimToResume(int64_t id) {
  std::string last_reason;
  for (;;) {
    SchemaChangeRecord r;
    {
      std::lock_guard lock(mutex_);
      r = records_[id];
    }
    auto claimed = co_await fleet_->claim(r.table, id, r.statement, r.created_by);
    if (claimed) {
      {
        std::lock_guard lock(mutex_);
        claims_[id] = *claimed;
      }
      const std::string by = co_await adoptedBy(id);
      if (by.empty()) co_return ResumeClaim::kClaimed;
      co_await markAdopted(id, by);
      co_return ResumeClaim::kAdopted;
    }
    if (claimed.error().message != last_reason) {
      last_reason = claimed.error().message;
      spdlog::warn("schema change {} of {}: waits to resume: {}", id, r.table, last_reason);
      std::lock_guard lock(mutex_);
      auto& record = records_[id];
      record.message = "waiting for the fleet's claim of the table: " + last_reason;
      save(record);
    }
    asio::steady_timer timer(io_, kClaimRetry);
    co_await timer.async_wait(kNoThrow);
  }
}

awaitable<std::optional<AdminError>> SchemaCoordinator::claimToRetry(int64_t id) {
  if (holdsClaim(id)) co_return std::nullopt;
  SchemaChangeRecord r;
  {
    std::lock_guard lock(mutex_);
    r = records_[id];
  }
  auto claimed = co_await fleet_->claim(r.table, id, r.statement, r.created_by);
  if (!claimed) co_return schemaChangeRefused(claimed.error().message);
  {
    std::lock_guard lock(mutex_);
    claims_[id] = *claimed;
  }
  if (const std::string by = co_await adoptedBy(id); !by.empty()) {
    co_await markAdopted(id, by);
    std::lock_guard lock(mutex_);
    co_return std::get<AdminError>(outcome(id));
  }
  co_return std::nullopt;
}

awaitable<std::string> SchemaCoordinator::adoptedBy(int64_t id) {
  // Unknown when etcd does not answer: the change resumes, and finds the
  // tables the adopter changed already changed (by their definition).
  auto all = co_await fleet_->list();
  if (!all) co_return std::string();
  for (const auto& change : *all) {
    if (change.proxy == fleet_->proxyName() && change.record.id == id) co_return change.adopted_by;
  }
  co_return std::string();
}

awaitable<void> SchemaCoordinator::markAdopted(int64_t id, std::string by) {
  {
    std::lock_guard lock(mutex_);
    auto& r = records_[id];
    r.state = SchemaChangeState::kAdopted;
    r.message = "adopted by " + by;
    save(r);
    spdlog::warn("schema change {} of {}: adopted by {}: not resumed here", id, r.table, by);
  }
  co_await releaseClaim(id);
}

awaitable<bool> SchemaCoordinator::stillClaimed(int64_t id) {
  if (!fleet_) co_return true;
  std::string table;
  SchemaClaimTicket ticket;
  {
    std::lock_guard lock(mutex_);
    if (halted_.contains(id)) co_return false;
    auto it = claims_.find(id);
    if (it == claims_.end()) co_return true;  // not claimed in this run (cannot happen in a fleet)
    table = records_[id].table;
    ticket = it->second;
  }
  auto holds = co_await fleet_->holds(table, ticket);
  if (holds && *holds) co_return true;
  std::lock_guard lock(mutex_);
  halted_[id] = holds ? fmt::format("this proxy lost the fleet's claim of {} (its etcd lease expired); stopped "
                                    "before the next table: RETRY SCHEMA CHANGE {}", table, id)
                      : fmt::format("etcd did not answer whether this proxy still holds the claim of {} ({}); "
                                    "stopped before the next table: RETRY SCHEMA CHANGE {}", table, holds.error(), id);
  spdlog::error("schema change {}: {}", id, halted_[id]);
  co_return false;
}

std::optional<SchemaClaimTicket> SchemaCoordinator::takeClaim(int64_t id) {
  auto it = claims_.find(id);
  if (it == claims_.end()) return std::nullopt;
  const SchemaClaimTicket ticket = it->second;
  claims_.erase(it);
  return ticket;
}

awaitable<void> SchemaCoordinator::releaseClaim(int64_t id) {
  std::optional<SchemaClaimTicket> ticket;
  std::string table;
  {
    std::lock_guard lock(mutex_);
    ticket = takeClaim(id);
    table = records_[id].table;
  }
  // Before the change's client has its answer: a change of the same table
  // it starts next on another proxy finds the table free.
  if (ticket) co_await fleet_->release(table, *ticket);
}

void SchemaCoordinator::publishLater(int64_t id) {
  if (fleet_ == nullptr || id == 0) return;
  dirty_.insert(id);
  if (publishing_) return;
  publishing_ = true;
  // Posted: save() runs under mutex_, often on the thread itself.
  asio::post(io_, [this] { asio::co_spawn(io_, publishDirty(), asio::detached); });
}

awaitable<void> SchemaCoordinator::publishDirty() {
  for (;;) {
    FleetSchemaChange change;
    {
      std::lock_guard lock(mutex_);
      if (dirty_.empty()) {
        publishing_ = false;
        co_return;
      }
      const int64_t id = *dirty_.begin();
      dirty_.erase(dirty_.begin());
      auto it = records_.find(id);
      if (it == records_.end()) continue;
      change.proxy = fleet_->proxyName();
      change.record = it->second;  // the newest state: an older one is never put after it
    }
    auto put = co_await fleet_->record(change);
    if (put) continue;
    spdlog::warn("schema change {}: its record was not put in etcd ({}); tried again", change.record.id, put.error());
    {
      std::lock_guard lock(mutex_);
      dirty_.insert(change.record.id);
    }
    asio::steady_timer timer(io_, kPublishRetry);
    co_await timer.async_wait(kNoThrow);
  }
}

awaitable<AdminReply> SchemaCoordinator::adopt(std::string proxy, int64_t id, std::string who) {
  const std::string name = qualified(proxy, id);
  auto all = co_await fleet_->list();
  if (!all) co_return schemaChangeRefused("cannot read the fleet's schema changes: " + all.error());
  auto it = std::find_if(all->begin(), all->end(),
                         [&](const FleetSchemaChange& c) { return c.proxy == proxy && c.record.id == id; });
  if (it == all->end()) co_return AdminError{1105, "HY000", "shardproxy admin: no schema change " + name + " in the fleet"};
  FleetSchemaChange theirs = *it;
  if (!theirs.adopted_by.empty()) {
    co_return schemaChangeRefused(fmt::format("schema change {} was adopted by {} already", name, theirs.adopted_by));
  }
  if (theirs.record.state != SchemaChangeState::kRunning && theirs.record.state != SchemaChangeState::kFailed) {
    co_return schemaChangeRefused(fmt::format("schema change {} is {}; only a running change whose proxy is gone "
                                              "or a failed one is adopted", name, toString(theirs.record.state)));
  }
  if (theirs.claimed) {
    co_return schemaChangeRefused(fmt::format("proxy {} runs schema change {} now; retry it there, or wait until "
                                              "that proxy is gone (its lease expired)", proxy, id));
  }
  if (auto running = runningChangeOf(theirs.record.table)) co_return schemaChangeRefused(*running);
  auto claimed = co_await fleet_->claim(theirs.record.table, 0, theirs.record.statement, who);
  if (!claimed) co_return schemaChangeRefused(claimed.error().message);
  SchemaChangeRecord mine = theirs.record;
  mine.id = 0;
  mine.state = SchemaChangeState::kRunning;
  mine.message = fmt::format("adopted from {} by {}", name, who);
  for (auto& t : mine.tables) {
    if (t.state == TableChangeState::kFailed) {
      t.state = TableChangeState::kPending;
      t.error.clear();
    }
  }
  {
    std::lock_guard lock(mutex_);
    save(mine);
    records_[mine.id] = mine;
    claims_[mine.id] = *claimed;
  }
  // Marked while this proxy holds the claim: the other proxy, back, claims
  // the table only after this change ends, and then reads that it was
  // adopted (a key of its own: that proxy's puts of its record keep it).
  if (auto put = co_await fleet_->markAdopted(proxy, id, qualified(fleet_->proxyName(), mine.id)); !put) {
    // Harmless: that proxy, back, resumes it and finds its tables changed.
    spdlog::warn("schema change {}: adopted as {} but not marked so in etcd: {}", name, mine.id, put.error());
  }
  spdlog::warn("schema change {} of {}: adopted by {} as schema change {}", name, mine.table, who, mine.id);
  co_return co_await runToEnd(mine.id, true);
}

awaitable<AdminReply> SchemaCoordinator::showFleet(SchemaCommand command) {
  auto all = co_await fleet_->list();
  if (!all) co_return AdminError{1105, "HY000", "shardproxy admin: cannot read the fleet's schema changes: " + all.error()};
  const std::string& me = fleet_->proxyName();
  std::lock_guard lock(mutex_);
  if (command.kind == SchemaCommand::Kind::kShowOne) {
    if (command.proxy.empty() || command.proxy == me) co_return showOne(command.id);
    for (const auto& c : *all) {
      if (c.proxy == command.proxy && c.record.id == command.id) co_return tablesResult(c.record);
    }
    co_return AdminError{1105, "HY000",
                         "shardproxy admin: no schema change " + qualified(command.proxy, command.id) + " in the fleet"};
  }
  // This proxy's changes from its own records (the newest), the others' from etcd.
  std::vector<ChangeRow> rows;
  for (const auto& [id, r] : records_) {
    std::string adopted_by;
    for (const auto& c : *all) {
      if (c.proxy == me && c.record.id == id) adopted_by = c.adopted_by;
    }
    rows.push_back(ChangeRow{&r, me, claims_.contains(id) ? "yes" : "no", adopted_by});
  }
  for (const auto& c : *all) {
    if (c.proxy != me) rows.push_back(ChangeRow{&c.record, c.proxy, c.claimed ? "yes" : "no", c.adopted_by});
  }
  co_return changesResult(rows);
}

}  // namespace sp::proxy
