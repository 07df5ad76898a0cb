// Runs schema changes of logical tables (docs/admin.md, "Schema changes") on
// a thread of its own: a client's DDL (SchemaChangeService) or the admin
// port's starts a change; its first physical table runs alone (so that a
// change MariaDB cannot make online is refused before anything changed),
// then the rest, at most schema.parallel_per_backend at a time per backend;
// after each table the record is saved in SQLite, and the unfinished
// changes are resumed at start-up. A failed change stops starting tables and
// waits for RETRY SCHEMA CHANGE. In a fleet (schema_fleet_link.hpp) a change
// also holds its table's claim in etcd and puts its record there after each
// table; another proxy can adopt the change of a proxy that is gone.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "proxy/core/admin_reply.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/core/schema_change_service.hpp"
#include "proxy/net/net.hpp"
#include "proxy/schema/schema_command.hpp"
#include "proxy/schema/schema_fleet_link.hpp"
#include "proxy/schema/schema_store.hpp"

namespace sp::proxy {

class SchemaCoordinator final : public SchemaChangeService {
 public:
  explicit SchemaCoordinator(ProxyContext& context);
  ~SchemaCoordinator() override;
  SchemaCoordinator(const SchemaCoordinator&) = delete;
  SchemaCoordinator& operator=(const SchemaCoordinator&) = delete;

  // Before start(): the fleet's claims and records (none: one proxy, SQLite only).
  void attachFleet(SchemaFleetLink* fleet) { fleet_ = fleet; }
  // Opens the SQLite tables, starts the thread, resumes unfinished changes.
  void start();
  void stop();

  awaitable<AdminReply> submit(routing::LogicalDdl ddl, std::string who) override;
  // An admin command (from the admin thread).
  awaitable<AdminReply> execute(SchemaCommand command, std::string who);

 private:
  awaitable<AdminReply> begin(routing::LogicalDdl ddl, std::string who);  // on the thread
  awaitable<AdminReply> retry(int64_t id, std::string who);              // on the thread
  awaitable<AdminReply> runToEnd(int64_t id, bool resuming);             // on the thread
  awaitable<void> runTables(int64_t id, const routing::LogicalDdl& ddl, bool resuming);
  awaitable<void> runOne(int64_t id, size_t index, const routing::LogicalDdl& ddl, bool resuming);
  awaitable<void> runBackendQueue(int64_t id, std::shared_ptr<std::vector<size_t>> queue,
                                  const routing::LogicalDdl& ddl, bool resuming);
  AdminReply outcome(int64_t id);
  AdminReply show();
  AdminReply showOne(int64_t id);
  std::optional<AdminError> retryRefusal(int64_t id);  // mutex_ held
  std::optional<std::string> runningChangeOf(const std::string& table);
  std::string ownName() const;  // in a fleet: this proxy's name
  void save(SchemaChangeRecord& record);  // mutex_ held

  // In a fleet (schema_coordinator_fleet.cpp); on the thread unless noted.
  enum class ResumeClaim : uint8_t { kClaimed, kAdopted };
  bool holdsClaim(int64_t id);
  awaitable<ResumeClaim> claimToResume(int64_t id);           // waits while etcd does not answer
  awaitable<std::optional<AdminError>> claimToRetry(int64_t id);
  // Whether a proxy of the fleet took change `id` over: its "<proxy>/<id>".
  awaitable<std::string> adoptedBy(int64_t id);
  awaitable<void> markAdopted(int64_t id, std::string by);  // releases the claim
  awaitable<bool> stillClaimed(int64_t id);                  // false: halted_ says why
  std::optional<SchemaClaimTicket> takeClaim(int64_t id);     // mutex_ held
  awaitable<void> releaseClaim(int64_t id);
  void publishLater(int64_t id);                             // mutex_ held
  awaitable<void> publishDirty();
  awaitable<AdminReply> adopt(std::string proxy, int64_t id, std::string who);
  awaitable<AdminReply> showFleet(SchemaCommand command);
  static AdminError notInAFleet();

  ProxyContext& context_;
  std::mutex mutex_;  // records_, store_, active_ and the fleet state below
  std::unique_ptr<SchemaStore> store_;
  std::string store_problem_;
  std::map<int64_t, SchemaChangeRecord> records_;
  std::set<int64_t> active_;  // changes a coroutine runs now
  SchemaFleetLink* fleet_ = nullptr;
  std::map<int64_t, SchemaClaimTicket> claims_;  // the table claims this proxy holds, by change
  std::map<int64_t, std::string> halted_;        // changes stopped because their claim was lost: why
  std::set<int64_t> dirty_;                      // changes whose record the fleet has not had yet
  bool publishing_ = false;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace sp::proxy
