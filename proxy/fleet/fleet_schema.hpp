// Schema changes through etcd (SchemaFleetLink, proxy/schema/
// schema_fleet_link.hpp; keys in coord/schema_records.hpp): the table claims
// under the fleet agent's lease and the changes' records. Called on the
// schema-change runner's thread with a client of its own.
#pragma once
#include <functional>
#include <string>

#include "conf/fleet_config.hpp"
#include "coord/etcd_messages.hpp"
#include "coord/schema_records.hpp"
#include "proxy/fleet/etcd_client.hpp"
#include "proxy/schema/schema_fleet_link.hpp"

namespace sp::proxy {

coord::SchemaChangeFleetRecord schemaFleetRecord(const FleetSchemaChange& change);
FleetSchemaChange fleetSchemaChangeOf(const coord::SchemaChangeFleetRecord& record);

class FleetSchema final : public SchemaFleetLink {
 public:
  // `lease`: the fleet session's lease now (0: no session with etcd).
  FleetSchema(const conf::FleetConfig& config, std::function<int64_t()> lease);

  const std::string& proxyName() const override { return config_.name; }
  awaitable<std::expected<SchemaClaimTicket, SchemaClaimRefusal>> claim(std::string table, int64_t id,
                                                                      std::string statement,
                                                                      std::string who) override;
  awaitable<std::expected<bool, std::string>> holds(std::string table, SchemaClaimTicket ticket) override;
  awaitable<void> release(std::string table, SchemaClaimTicket ticket) override;
  awaitable<std::expected<void, std::string>> record(FleetSchemaChange change) override;
  awaitable<std::expected<void, std::string>> markAdopted(std::string proxy, int64_t id, std::string by) override;
  awaitable<std::expected<std::vector<FleetSchemaChange>, std::string>> list() override;

 private:
  // Puts the claim under `lease` if the key is still at `mod_revision` (0: absent).
  awaitable<std::expected<coord::EtcdTxnResponse, std::string>> putClaim(const std::string& key, int64_t mod_revision,
                                                                         const coord::SchemaClaimRecord& claim,
                                                                         int64_t lease);

  awaitable<std::expected<void, std::string>> put(std::string key, std::string value);

  const conf::FleetConfig config_;
  std::function<int64_t()> lease_;
  EtcdClient client_;
};

}  // namespace sp::proxy
