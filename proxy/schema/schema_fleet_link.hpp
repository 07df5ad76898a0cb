// What schema changes need of a fleet (docs/admin.md, "Schema changes in a
// fleet"): one proxy at a time changes a logical table, and every change is
// recorded where the other proxies can list it and adopt it when its proxy
// is gone (keys in coord/schema_records.hpp). Defined here, implemented by
// proxy/fleet (FleetSchema), so that this subsystem never sees etcd, the way
// the replication groups' HaFleetLink is.
//
// A change holds the claim of its table from its first physical table to its
// end, under its proxy's lease; before each table it checks that the claim
// still stands (a proxy cut off from etcd long enough to lose its lease stops
// after the table in flight), and its record is put after each table.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "proxy/net/net.hpp"
#include "proxy/schema/schema_change_record.hpp"

namespace sp::proxy {

struct SchemaClaimTicket {
  int64_t create_revision = 0;  // the claim key's: a successor's claim is another key
};

struct SchemaClaimRefusal {
  // Another proxy's change holds the table; otherwise etcd did not answer or
  // this proxy has no session with it (then it may try again later).
  bool held_by_other = false;
  std::string message;
};

// A change as the fleet records it: this proxy's or another's.
struct FleetSchemaChange {
  std::string proxy;
  SchemaChangeRecord record;
  std::string adopted_by;  // "<proxy>/<id>" once another proxy took it over
  bool claimed = false;    // its proxy holds its table's claim for it now
};

class SchemaFleetLink {
 public:
  virtual ~SchemaFleetLink() = default;
  virtual const std::string& proxyName() const = 0;
  // Claims `table` under this proxy's lease for change `id` (0: not yet
  // recorded). A claim this proxy left from an earlier session (a restart
  // within its lease) is taken over.
  virtual awaitable<std::expected<SchemaClaimTicket, SchemaClaimRefusal>> claim(std::string table, int64_t id,
                                                                              std::string statement,
                                                                              std::string who) = 0;
  // Whether the claim still stands; an error when etcd did not answer.
  virtual awaitable<std::expected<bool, std::string>> holds(std::string table, SchemaClaimTicket ticket) = 0;
  virtual awaitable<void> release(std::string table, SchemaClaimTicket ticket) = 0;
  // Puts the change's record (schema/changes/<proxy>/<id>).
  virtual awaitable<std::expected<void, std::string>> record(FleetSchemaChange change) = 0;
  // Says that `proxy`'s change `id` was adopted as `by` ("<proxy>/<id>").
  virtual awaitable<std::expected<void, std::string>> markAdopted(std::string proxy, int64_t id, std::string by) = 0;
  // Every proxy's records, with whether each is claimed now and who adopted
  // it (then its state reads adopted).
  virtual awaitable<std::expected<std::vector<FleetSchemaChange>, std::string>> list() = 0;
};

}  // namespace sp::proxy
