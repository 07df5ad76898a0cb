#include "proxy/fleet/fleet_schema.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coord/etcd_messages.hpp"

namespace sp::proxy {

namespace {

std::string claimHolder(const coord::SchemaClaimRecord& claim) {
  return fmt::format("a change of this table runs on proxy {}{} ({}; by {})", claim.proxy,
                     claim.change_id > 0 ? fmt::format(" (its schema change {})", claim.change_id) : "",
                     claim.statement.substr(0, 200), claim.who);
}

}  // namespace

coord::SchemaChangeFleetRecord schemaFleetRecord(const FleetSchemaChange& change) {
  const SchemaChangeRecord& r = change.record;
  coord::SchemaChangeFleetRecord out;
  out.proxy = change.proxy;
  out.id = r.id;
  out.table = r.table;
  out.kind = r.kind;
  out.statement = r.statement;
  out.state = std::string(toString(r.state));
  out.message = r.message;
  out.shapes_before = r.shapes_before;
  out.created_by = r.created_by;
  out.created_at = r.created_at;
  out.updated_at = r.updated_at;
  for (const auto& t : r.tables) {
    out.tables.push_back({t.backend, t.table, t.role, std::string(toString(t.state)), t.algorithm, t.error, t.seconds});
  }
  return out;
}

FleetSchemaChange fleetSchemaChangeOf(const coord::SchemaChangeFleetRecord& in) {
  FleetSchemaChange change;
  change.proxy = in.proxy;
  SchemaChangeRecord& r = change.record;
  r.id = in.id;
  r.table = in.table;
  r.kind = in.kind;
  r.statement = in.statement;
  // A state this version does not know (a newer proxy's) reads as failed: never resumed by mistake.
  r.state = schemaChangeStateNamed(in.state).value_or(SchemaChangeState::kFailed);
  r.message = in.message;
  r.shapes_before = in.shapes_before;
  r.created_by = in.created_by;
  r.created_at = in.created_at;
  r.updated_at = in.updated_at;
  for (const auto& t : in.tables) {
    r.tables.push_back(TableChange{t.backend, t.table, t.role,
                                   tableChangeStateNamed(t.state).value_or(TableChangeState::kPending), t.algorithm,
                                   t.seconds, t.error});
  }
  return change;
}

FleetSchema::FleetSchema(const conf::FleetConfig& config, std::function<int64_t()> lease)
    : config_(config), lease_(std::move(lease)), client_(config_) {}

awaitable<std::expected<coord::EtcdTxnResponse, std::string>> FleetSchema::putClaim(
    const std::string& key, int64_t mod_revision, const coord::SchemaClaimRecord& claim, int64_t lease) {
  auto answer = co_await client_.call(
      "/v3/kv/txn", coord::etcdCasPutRequest(key, mod_revision, coord::encodeSchemaClaim(claim), nullptr, lease));
  if (!answer) co_return std::unexpected("etcd: claim " + key + ": " + answer.error());
  auto txn = coord::parseEtcdTxn(*answer);
  if (!txn) co_return std::unexpected("etcd: " + txn.error());
  co_return *txn;
}

awaitable<std::expected<SchemaClaimTicket, SchemaClaimRefusal>> FleetSchema::claim(std::string table, int64_t id,
                                                                                 std::string statement,
                                                                                 std::string who) {
  const int64_t lease = lease_();
  if (lease == 0) {
    co_return std::unexpected(SchemaClaimRefusal{
        false, "this proxy has no session with the coordination store (etcd; SHOW FLEET): a proxy cut off from etcd "
               "starts no schema change, since another proxy could change the same table meanwhile"});
  }
  const std::string key = coord::schemaClaimKey(config_.etcd_prefix, table);
  const coord::SchemaClaimRecord mine{config_.name, id, std::move(statement), std::move(who)};
  auto put = co_await putClaim(key, 0, mine, lease);
  if (!put) co_return std::unexpected(SchemaClaimRefusal{false, put.error()});
  if (put->succeeded) co_return SchemaClaimTicket{put->header.revision};
  if (put->range_kvs.empty()) {
    co_return std::unexpected(SchemaClaimRefusal{false, "etcd: the claim of " + table + " changed meanwhile"});
  }
  const coord::EtcdKv& held = put->range_kvs.front();
  auto holder = coord::decodeSchemaClaim(held.value);
  if (!holder) co_return std::unexpected(SchemaClaimRefusal{true, key + ": " + holder.error()});
  if (holder->proxy == config_.name && held.lease != lease) {
    // Left by this proxy before a restart, its lease not yet expired: the
    // change it names is this proxy's to resume, or over.
    auto again = co_await putClaim(key, held.mod_revision, mine, lease);
    if (!again) co_return std::unexpected(SchemaClaimRefusal{false, again.error()});
    if (again->succeeded) co_return SchemaClaimTicket{held.create_revision};
    co_return std::unexpected(SchemaClaimRefusal{false, "etcd: the claim of " + table + " changed meanwhile"});
  }
  co_return std::unexpected(SchemaClaimRefusal{true, claimHolder(*holder) + "; one change of a table at a time in "
                                                                            "the fleet (SHOW SCHEMA CHANGES)"});
}

awaitable<std::expected<bool, std::string>> FleetSchema::holds(std::string table, SchemaClaimTicket ticket) {
  const std::string key = coord::schemaClaimKey(config_.etcd_prefix, table);
  auto answer = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(key, false));
  if (!answer) co_return std::unexpected("etcd: read " + key + ": " + answer.error());
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return std::unexpected("etcd: " + range.error());
  if (range->kvs.empty() || range->kvs.front().create_revision != ticket.create_revision) co_return false;
  const coord::EtcdKv& kv = range->kvs.front();
  const int64_t lease = lease_();
  if (lease != 0 && kv.lease != lease) {
    // A new session since the claim (etcd was out of reach for a while):
    // move the claim under the new lease before the old one expires.
    auto claim = coord::decodeSchemaClaim(kv.value);
    if (!claim) co_return std::unexpected(key + ": " + claim.error());
    auto moved = co_await putClaim(key, kv.mod_revision, *claim, lease);
    if (!moved) co_return std::unexpected(moved.error());
    co_return moved->succeeded;
  }
  co_return true;
}

awaitable<void> FleetSchema::release(std::string table, SchemaClaimTicket ticket) {
  const std::string key = coord::schemaClaimKey(config_.etcd_prefix, table);
  auto answer = co_await client_.call("/v3/kv/txn", coord::etcdGuardedDeleteRequest(key, ticket.create_revision));
  if (!answer) {
    spdlog::warn("fleet {}: could not release the schema claim of {} ({}); it ends with this proxy's lease",
                 config_.name, table, answer.error());
  }
}

awaitable<std::expected<void, std::string>> FleetSchema::record(FleetSchemaChange change) {
  co_return co_await put(coord::schemaChangeKey(config_.etcd_prefix, change.proxy, change.record.id),
                         coord::encodeSchemaChange(schemaFleetRecord(change)));
}

awaitable<std::expected<void, std::string>> FleetSchema::markAdopted(std::string proxy, int64_t id, std::string by) {
  co_return co_await put(coord::schemaAdoptedKey(config_.etcd_prefix, proxy, id), by);
}

awaitable<std::expected<void, std::string>> FleetSchema::put(std::string key, std::string value) {
  auto answer = co_await client_.call("/v3/kv/put", coord::etcdPutRequest(key, value));
  if (!answer) co_return std::unexpected("etcd: put " + key + ": " + answer.error());
  auto put = coord::parseEtcdPut(*answer);
  if (!put) co_return std::unexpected("etcd: " + put.error());
  co_return std::expected<void, std::string>{};
}

awaitable<std::expected<std::vector<FleetSchemaChange>, std::string>> FleetSchema::list() {
  auto changes = co_await client_.call("/v3/kv/range",
                                       coord::etcdRangeRequest(coord::schemaChangesPrefix(config_.etcd_prefix), true));
  if (!changes) co_return std::unexpected("etcd: list the schema changes: " + changes.error());
  auto claims = co_await client_.call("/v3/kv/range",
                                      coord::etcdRangeRequest(coord::schemaClaimPrefix(config_.etcd_prefix), true));
  if (!claims) co_return std::unexpected("etcd: list the schema claims: " + claims.error());
  auto adoptions = co_await client_.call(
      "/v3/kv/range", coord::etcdRangeRequest(coord::schemaAdoptedPrefix(config_.etcd_prefix), true));
  if (!adoptions) co_return std::unexpected("etcd: list the schema adoptions: " + adoptions.error());
  auto adopted_range = coord::parseEtcdRange(*adoptions);
  if (!adopted_range) co_return std::unexpected("etcd: " + adopted_range.error());
  auto change_range = coord::parseEtcdRange(*changes);
  auto claim_range = coord::parseEtcdRange(*claims);
  if (!change_range) co_return std::unexpected("etcd: " + change_range.error());
  if (!claim_range) co_return std::unexpected("etcd: " + claim_range.error());
  const std::string claim_root = coord::schemaClaimPrefix(config_.etcd_prefix);
  std::vector<std::pair<std::string, coord::SchemaClaimRecord>> held;  // table, claim
  for (const auto& kv : claim_range->kvs) {
    if (auto claim = coord::decodeSchemaClaim(kv.value)) held.emplace_back(kv.key.substr(claim_root.size()), *claim);
  }
  std::vector<FleetSchemaChange> out;
  for (const auto& kv : change_range->kvs) {
    auto record = coord::decodeSchemaChange(kv.value);
    if (!record) {
      spdlog::warn("fleet {}: {}: {}", config_.name, kv.key, record.error());
      continue;
    }
    FleetSchemaChange change = fleetSchemaChangeOf(*record);
    const std::string adopted_key = coord::schemaAdoptedKey(config_.etcd_prefix, change.proxy, change.record.id);
    for (const auto& a : adopted_range->kvs) {
      if (a.key == adopted_key) change.adopted_by = a.value;
    }
    if (!change.adopted_by.empty()) change.record.state = SchemaChangeState::kAdopted;
    // A claim not yet labelled with its change (id 0) belongs to the one
    // running change of that table on its proxy.
    change.claimed = change.record.state == SchemaChangeState::kRunning &&
                     std::any_of(held.begin(), held.end(), [&](const auto& h) {
                       return h.first == change.record.table && h.second.proxy == change.proxy &&
                              (h.second.change_id == change.record.id || h.second.change_id == 0);
                     });
    out.push_back(std::move(change));
  }
  std::sort(out.begin(), out.end(), [](const FleetSchemaChange& a, const FleetSchemaChange& b) {
    return std::tie(a.proxy, a.record.id) < std::tie(b.proxy, b.record.id);
  });
  co_return out;
}

}  // namespace sp::proxy
