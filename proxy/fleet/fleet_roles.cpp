#include "proxy/fleet/fleet_roles.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "coord/etcd_messages.hpp"
#include "coord/fleet_records.hpp"

namespace sp::proxy {

namespace {

constexpr auto kAckPoll = std::chrono::milliseconds(5);
constexpr int kPublishAttempts = 5;
constexpr auto kPublishRetry = std::chrono::milliseconds(200);

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

coord::FleetTopologyRecord topologyRecord(const Topology& topology) {
  coord::FleetTopologyRecord record;
  record.version = topology.version;
  for (const auto& g : topology.groups) {
    record.groups.push_back({g.backend, g.primary, g.replicas, g.fenced, g.promoted_at, g.changed_unix_ms, g.change});
  }
  return record;
}

Topology topologyOfRecord(const coord::FleetTopologyRecord& record) {
  Topology topology;
  topology.version = record.version;
  for (const auto& g : record.groups) {
    topology.groups.push_back({g.backend, g.primary, g.replicas, g.fenced, g.promoted_at, g.changed_unix_ms, g.change});
  }
  return topology;
}

FleetRoles::FleetRoles(const conf::FleetConfig& config, std::function<int64_t()> lease)
    : config_(config), lease_(std::move(lease)), client_(config_) {}

awaitable<std::expected<RoleChangeTicket, std::string>> FleetRoles::begin(std::string backend, std::string kind,
                                                                          std::string who, uint32_t hold_ms) {
  const int64_t lease = lease_();
  if (lease == 0) {
    co_return std::unexpected(
        "this proxy has no session with the coordination store (etcd; SHOW FLEET): a proxy cut off from etcd changes "
        "no roles, since the others could not follow");
  }
  RoleChangeTicket ticket;
  const std::string topology_key = coord::haTopologyKey(config_.etcd_prefix);
  auto ranged = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(topology_key, false));
  if (!ranged) co_return std::unexpected("etcd: read " + topology_key + ": " + ranged.error());
  auto range = coord::parseEtcdRange(*ranged);
  if (!range) co_return std::unexpected("etcd: " + range.error());
  if (!range->kvs.empty()) {
    auto record = coord::decodeFleetTopology(range->kvs.front().value);
    if (!record) co_return std::unexpected(topology_key + ": " + record.error());
    ticket.topology_revision = range->kvs.front().mod_revision;
    ticket.topology_version = record->version;
    ticket.fleet_topology = topologyOfRecord(*record);
  }
  coord::RoleChangeRecord change{std::move(backend), std::move(kind), config_.name, std::move(who), hold_ms};
  auto put = co_await client_.call("/v3/kv/txn", coord::etcdCasPutRequest(coord::haChangeKey(config_.etcd_prefix), 0,
                                                                          coord::encodeRoleChange(change), nullptr,
                                                                          lease));
  if (!put) co_return std::unexpected("etcd: claim the role change: " + put.error());
  auto txn = coord::parseEtcdTxn(*put);
  if (!txn) co_return std::unexpected("etcd: " + txn.error());
  if (!txn->succeeded) {
    std::string running = "unknown";
    if (!txn->range_kvs.empty()) {
      auto other = coord::decodeRoleChange(txn->range_kvs.front().value);
      if (other) running = fmt::format("{} of backend {} by proxy {} ({})", other->kind, other->backend, other->proxy,
                                       other->who);
    }
    co_return std::unexpected("another role change is running in the fleet: " + running + "; one at a time");
  }
  ticket.change_revision = txn->header.revision;
  co_return ticket;
}

awaitable<std::expected<std::vector<std::string>, std::string>> FleetRoles::missingAcks(int64_t change_revision) {
  auto members = co_await client_.call("/v3/kv/range",
                                       coord::etcdRangeRequest(coord::membersPrefix(config_.etcd_prefix), true));
  if (!members) co_return std::unexpected("etcd: list the proxies: " + members.error());
  auto acks = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(coord::haAckPrefix(config_.etcd_prefix), true));
  if (!acks) co_return std::unexpected("etcd: list the acknowledgements: " + acks.error());
  auto live = coord::parseEtcdRange(*members);
  auto acked = coord::parseEtcdRange(*acks);
  if (!live) co_return std::unexpected("etcd: " + live.error());
  if (!acked) co_return std::unexpected("etcd: " + acked.error());
  const std::string member_root = coord::membersPrefix(config_.etcd_prefix);
  const std::string ack_root = coord::haAckPrefix(config_.etcd_prefix);
  const std::string wanted = std::to_string(change_revision);
  std::vector<std::string> missing;
  for (const auto& kv : live->kvs) {
    std::string name = kv.key.substr(member_root.size());
    if (name == config_.name) continue;
    bool ok = std::any_of(acked->kvs.begin(), acked->kvs.end(), [&](const coord::EtcdKv& a) {
      return a.key.substr(ack_root.size()) == name && a.value == wanted;
    });
    if (!ok) missing.push_back(std::move(name));
  }
  co_return missing;
}

awaitable<std::expected<void, std::string>> FleetRoles::awaitHolds(RoleChangeTicket ticket,
                                                                   std::chrono::steady_clock::time_point deadline) {
  auto executor = co_await asio::this_coro::executor;
  for (;;) {
    auto missing = co_await missingAcks(ticket.change_revision);
    if (!missing) co_return std::unexpected(missing.error());
    if (missing->empty()) co_return std::expected<void, std::string>{};
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return std::unexpected(fmt::format("proxies {} did not hold the group's statements within "
                                            "fleet.fence_ack_timeout_ms ({} ms)",
                                            joined(*missing), config_.fence_ack_timeout_ms));
    }
    asio::steady_timer timer(executor, kAckPoll);
    co_await timer.async_wait(kNoThrow);
  }
}

awaitable<std::expected<void, std::string>> FleetRoles::publish(Topology topology, RoleChangeTicket ticket) {
  coord::FleetTopologyRecord record = topologyRecord(topology);
  record.version = ticket.topology_version + 1;
  record.published_by = config_.name;
  // Only while this change still stands (its proxy's lease alive): a change
  // whose lease expired was abandoned by every other proxy.
  const coord::EtcdGuard guard{coord::haChangeKey(config_.etcd_prefix), ticket.change_revision};
  const std::string body = coord::etcdCasPutRequest(coord::haTopologyKey(config_.etcd_prefix), ticket.topology_revision,
                                                    coord::encodeFleetTopology(record), &guard);
  auto executor = co_await asio::this_coro::executor;
  std::string why;
  for (int attempt = 1; attempt <= kPublishAttempts; ++attempt) {
    auto answer = co_await client_.call("/v3/kv/txn", body);
    if (answer) {
      auto txn = coord::parseEtcdTxn(*answer);
      if (!txn) co_return std::unexpected("etcd: " + txn.error());
      if (txn->succeeded) co_return std::expected<void, std::string>{};
      co_return std::unexpected(
          "the fleet's topology changed meanwhile or this change's claim expired (its lease); nothing was published");
    }
    why = answer.error();
    asio::steady_timer timer(executor, kPublishRetry);
    co_await timer.async_wait(kNoThrow);
  }
  co_return std::unexpected("etcd did not answer in " + std::to_string(kPublishAttempts) + " attempts: " + why);
}

awaitable<void> FleetRoles::end(RoleChangeTicket ticket) {
  auto answer = co_await client_.call(
      "/v3/kv/txn", coord::etcdGuardedDeleteRequest(coord::haChangeKey(config_.etcd_prefix), ticket.change_revision));
  if (!answer) {
    spdlog::warn("fleet {}: could not end the role change of revision {} ({}); it ends with this proxy's lease",
                 config_.name, ticket.change_revision, answer.error());
  }
}

awaitable<void> FleetRoles::acknowledge(int64_t change_revision) {
  const int64_t lease = lease_();
  if (lease == 0) co_return;  // no session: the change waits for this proxy, then gives up
  auto put = co_await client_.call("/v3/kv/put", coord::etcdPutRequest(coord::haAckKey(config_.etcd_prefix, config_.name),
                                                                      std::to_string(change_revision), lease));
  if (!put) spdlog::warn("fleet {}: could not acknowledge role change {}: {}", config_.name, change_revision, put.error());
}

}  // namespace sp::proxy
