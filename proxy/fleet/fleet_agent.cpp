#include "proxy/fleet/fleet_agent.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "coord/etcd_messages.hpp"
#include "coord/ha_records.hpp"
#include "coord/limit_records.hpp"
#include "proxy/core/statement_limit_table.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr auto kFirstBackoff = std::chrono::milliseconds(50);

// "2026-11-30T10:21:07.123Z"
std::string utcNowMillis() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms);
}

std::string adminAddress(const conf::Config& config) {
  return config.server.admin_listen ? conf::formatHostPort(*config.server.admin_listen) : "-";
}

}  // namespace

FleetAgent::FleetAgent(ProxyContext& context, ShardMapManager& maps)
    : context_(context), maps_(maps), config_(*context.config().fleet), client_(config_),
      admin_address_(adminAddress(context.config())) {
  member_.name = config_.name;
  member_.admin = admin_address_;
  fences_ = std::make_unique<FleetFences>(context_, config_, client_, io_.get_executor());
  roles_ = std::make_unique<FleetRoles>(config_, [this] { return lease(); });
  schema_ = std::make_unique<FleetSchema>(config_, [this] { return lease(); });
  limits_ = std::make_unique<FleetLimits>(config_, context_.statement_limits);
}

FleetAgent::~FleetAgent() { stop(); }

void FleetAgent::start() {
  asio::co_spawn(io_, run(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

void FleetAgent::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  asio::post(io_, [this] {
    if (watch_stream_) watch_stream_->close();
  });
  if (int64_t lease = lease_.exchange(0); lease != 0) {
    auto revoked = runEtcdCall<std::expected<std::string, std::string>>(
        [lease](EtcdClient& c) { return c.call("/v3/lease/revoke", coord::etcdLeaseRevokeRequest(lease)); }, client_);
    if (!revoked) spdlog::warn("fleet: could not revoke lease {} on shutdown: {}", lease, revoked.error());
  }
  io_.stop();
  thread_.join();
}

void FleetAgent::setState(std::string state, bool healthy) {
  std::lock_guard lock(state_mutex_);
  if (healthy != healthy_ || (healthy && state != state_)) {
    if (healthy) spdlog::info("fleet {}: {}", config_.name, state);
    else spdlog::warn("fleet {}: {}", config_.name, state);
  }
  state_ = std::move(state);
  healthy_ = healthy;
  context_.fleet_session.store(healthy);
}

std::string FleetAgent::state() {
  std::lock_guard lock(state_mutex_);
  return state_;
}

awaitable<void> FleetAgent::run() {
  auto backoff = std::chrono::milliseconds(kFirstBackoff);
  auto executor = co_await asio::this_coro::executor;
  auto since = utcNowMillis();
  while (!stopping_.load()) {
    auto started = std::chrono::steady_clock::now();
    std::string why = co_await session();
    fences_->sessionLost();
    roles_->setLeader(false);  // its lease may expire: another proxy decides meanwhile
    if (stopping_.load()) break;
    // A session that lasted resets the backoff: only repeated quick failures grow it.
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(config_.lease_ttl_s)) {
      backoff = kFirstBackoff;
      since = utcNowMillis();
    }
    setState(fmt::format("no session with etcd since {}: {}; serving version {} (reconnecting, every {} ms at most)",
                         since, why, member_.version, config_.retry_max_ms),
             false);
    asio::steady_timer timer(executor, backoff);
    co_await timer.async_wait(kNoThrow);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(config_.retry_max_ms));
  }
}

// The lease of the previous session when it is still alive (a watch broken
// by a member's loss), else a new one.
awaitable<std::expected<int64_t, std::string>> FleetAgent::acquireLease() {
  if (int64_t previous = lease_.load(); previous != 0) {
    auto answer = co_await client_.call("/v3/lease/keepalive", coord::etcdLeaseKeepAliveRequest(previous));
    if (answer) {
      if (auto kept = coord::parseEtcdLeaseKeepAlive(*answer); kept && kept->ttl > 0) co_return previous;
    }
  }
  auto granted = co_await client_.call("/v3/lease/grant", coord::etcdLeaseGrantRequest(config_.lease_ttl_s));
  if (!granted) co_return std::unexpected("lease grant: " + granted.error());
  auto lease = coord::parseEtcdLeaseGrant(*granted);
  if (!lease) co_return std::unexpected(lease.error());
  lease_.store(lease->id);
  co_return lease->id;
}

awaitable<std::string> FleetAgent::session() {
  auto lease = co_await acquireLease();
  if (!lease) co_return lease.error();
  auto roster = co_await client_.call("/v3/kv/put", coord::etcdPutRequest(coord::rosterKey(config_.etcd_prefix, config_.name),
                                                                         config_.name, 0));
  if (!roster) co_return "join the roster: " + roster.error();
  int64_t fence_revision = 0;
  std::map<int64_t, FleetFences::Open> open;
  if (auto why = co_await readFences(fence_revision, open); !why.empty()) co_return why;
  int64_t revision = 0;
  if (auto why = co_await syncMap(revision); !why.empty()) co_return why;
  if (auto why = co_await readHa(); !why.empty()) co_return why;
  // After the fences' read: the watch replays from there, so the newest record of each rule is applied last.
  if (auto why = co_await limits_->read(client_); !why.empty()) co_return why;
  // Before the first keepalive: a proxy that just started would enforce whole limits, not its share.
  co_await countMembers();
  fences_->resynchronise(*lease, open);
  memberChanged();  // registers under the new lease
  setState(fmt::format("connected, lease {} ({} s), serving version {} of revision {}", *lease, config_.lease_ttl_s,
                       member_.version, member_.map_revision),
           true);
  auto outcome = co_await (watch(fence_revision + 1) || keepAlive(*lease));
  co_return std::visit([](auto& why) { return why; }, outcome);
}

// Reads <prefix>/map and applies it; publishes this proxy's map when the
// fleet has none yet. `revision`: the store's revision the watch starts after.
awaitable<std::string> FleetAgent::syncMap(int64_t& revision) {
  const std::string key = coord::mapKey(config_.etcd_prefix);
  auto ranged = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(key, false));
  if (!ranged) co_return "read the map: " + ranged.error();
  auto range = coord::parseEtcdRange(*ranged);
  if (!range) co_return range.error();
  revision = range->header.revision;
  if (range->kvs.empty()) {
    auto running = context_.shard_map.load();
    if (!running) co_return std::string();  // nothing to share yet: the first RELOAD publishes
    coord::PublishedMap first{running->version(), running->checksum(), running->sourceText(),
                              config_.name + " startup", "first map of the fleet"};
    auto put = co_await client_.call("/v3/kv/txn", coord::etcdCasPutRequest(key, 0, coord::encodePublishedMap(first)));
    if (!put) co_return "publish the first map: " + put.error();
    auto txn = coord::parseEtcdTxn(*put);
    if (!txn) co_return txn.error();
    if (!txn->succeeded) co_return "another proxy published the first map meanwhile";  // the next session reads it
    revision = txn->header.revision;
    seen_revision_ = revision;
    spdlog::info("fleet {}: published the first map of the fleet, version {}", config_.name, running->version());
    maps_.applyFromFleet({running->sourceText(), first.published_by, first.note, revision});
    co_return std::string();
  }
  const auto& kv = range->kvs.front();
  seen_revision_ = kv.mod_revision;
  auto published = coord::decodePublishedMap(kv.value);
  if (!published) co_return published.error();
  auto outcome = maps_.applyFromFleet({published->source, published->published_by, published->note, kv.mod_revision});
  if (outcome.verdict == SwapVerdict::kRefused) {
    spdlog::error("fleet {}: the fleet's map (version {}, revision {}) does not validate here; still serving version {}",
                  config_.name, published->version, kv.mod_revision, outcome.old_version);
  }
  co_return std::string();
}

awaitable<std::string> FleetAgent::readFences(int64_t& revision, std::map<int64_t, FleetFences::Open>& open) {
  auto answer = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(coord::fenceRoot(config_.etcd_prefix), true));
  if (!answer) co_return "read the fences: " + answer.error();
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return range.error();
  revision = range->header.revision;
  for (const auto& kv : range->kvs) {
    auto ref = coord::parseFenceKey(config_.etcd_prefix, kv.key);
    if (!ref) continue;
    if (ref->kind == coord::FenceKeyRef::Kind::kRequest) open[ref->epoch].request = kv.value;
    if (ref->kind == coord::FenceKeyRef::Kind::kSwitched) open[ref->epoch].switched_revision = std::atoll(kv.value.c_str());
  }
  std::erase_if(open, [](const auto& e) { return e.second.request.empty(); });  // a lift half seen
  co_return std::string();
}

void FleetAgent::onFenceEvent(const coord::EtcdWatchEvent& event) {
  auto ref = coord::parseFenceKey(config_.etcd_prefix, event.kv.key);
  if (!ref) return;
  using Kind = coord::FenceKeyRef::Kind;
  if (ref->kind == Kind::kRequest) {
    if (event.is_delete) fences_->onLifted(ref->epoch);
    else fences_->onRequest(ref->epoch, event.kv.value);
  } else if (ref->kind == Kind::kSwitched && !event.is_delete) {
    fences_->onSwitched(ref->epoch, std::atoll(event.kv.value.c_str()));
  }
}

// ---- role changes of replication groups (coord/ha_records.hpp) ----

awaitable<std::string> FleetAgent::readHa() {
  auto answer = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(coord::haPrefix(config_.etcd_prefix), true));
  if (!answer) co_return "read the roles: " + answer.error();
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return range.error();
  bool change_found = false;
  bool leader_found = false;
  for (const auto& kv : range->kvs) {
    auto ref = coord::parseHaKey(config_.etcd_prefix, kv.key);
    if (!ref) continue;
    switch (ref->kind) {
      case coord::HaKeyRef::Kind::kTopology: onTopology(kv); break;
      case coord::HaKeyRef::Kind::kChange:
        change_found = true;
        onRoleChange(kv);
        break;
      case coord::HaKeyRef::Kind::kLeader:
        leader_found = true;
        roles_->setLeader(kv.value == config_.name && kv.lease == lease_.load());
        break;
      case coord::HaKeyRef::Kind::kAck: break;
    }
  }
  if (!change_found && held_change_ != 0) {
    if (ha_) ha_->fleetChangeEnded(held_change_);
    held_change_ = 0;
  }
  if (!leader_found) co_await campaign();
  co_return std::string();
}

void FleetAgent::onHaEvent(const coord::EtcdWatchEvent& event) {
  auto ref = coord::parseHaKey(config_.etcd_prefix, event.kv.key);
  if (!ref) return;
  switch (ref->kind) {
    case coord::HaKeyRef::Kind::kTopology:
      if (!event.is_delete) onTopology(event.kv);
      break;
    case coord::HaKeyRef::Kind::kChange:
      if (!event.is_delete) {
        onRoleChange(event.kv);
      } else if (held_change_ != 0) {
        if (ha_) ha_->fleetChangeEnded(held_change_);
        held_change_ = 0;
      }
      break;
    case coord::HaKeyRef::Kind::kLeader:
      if (event.is_delete) {
        roles_->setLeader(false);
        asio::co_spawn(io_, campaign(), asio::detached);
      } else {
        roles_->setLeader(event.kv.value == config_.name && event.kv.lease == lease_.load());
      }
      break;
    case coord::HaKeyRef::Kind::kAck: break;
  }
}

void FleetAgent::onRoleChange(const coord::EtcdKv& kv) {
  auto change = coord::decodeRoleChange(kv.value);
  if (!change) {
    spdlog::error("fleet {}: {}: {}", config_.name, kv.key, change.error());
    return;
  }
  if (change->proxy == config_.name || kv.create_revision == held_change_) return;  // its own, or seen already
  if (held_change_ != 0 && ha_) ha_->fleetChangeEnded(held_change_);  // replaced while this proxy was away
  held_change_ = kv.create_revision;
  spdlog::info("fleet {}: {} of backend {} by proxy {} ({}): holding the group's statements", config_.name,
               change->kind, change->backend, change->proxy, change->who);
  if (ha_) ha_->fleetChangeBegun(change->backend, change->kind, change->proxy, kv.create_revision, change->hold_ms);
}

void FleetAgent::onTopology(const coord::EtcdKv& kv) {
  auto record = coord::decodeFleetTopology(kv.value);
  if (!record) {
    spdlog::error("fleet {}: {} (revision {}): {}; the roles in force stay", config_.name, kv.key, kv.mod_revision,
                  record.error());
    return;
  }
  if (ha_) ha_->fleetTopology(topologyOfRecord(*record), kv.mod_revision);
}

awaitable<void> FleetAgent::campaign() {
  const int64_t lease = lease_.load();
  if (lease == 0 || stopping_.load()) co_return;
  auto answer = co_await client_.call("/v3/kv/txn", coord::etcdCasPutRequest(coord::haLeaderKey(config_.etcd_prefix), 0,
                                                                             config_.name, nullptr, lease));
  if (!answer) {
    spdlog::warn("fleet {}: campaign for ha/leader: {}", config_.name, answer.error());
    co_return;
  }
  auto txn = coord::parseEtcdTxn(*answer);
  if (!txn) co_return;
  const bool won = txn->succeeded || (!txn->range_kvs.empty() && txn->range_kvs.front().value == config_.name &&
                                      txn->range_kvs.front().lease == lease);
  roles_->setLeader(won);
  if (won) spdlog::info("fleet {}: this proxy decides automatic failovers (ha/leader, lease {})", config_.name, lease);
}

awaitable<std::string> FleetAgent::watch(int64_t start_revision) {
  const std::string key = coord::mapKey(config_.etcd_prefix);
  // fence/ .. map, both ends included: a switch's map reaches this proxy before the lift that follows it.
  auto opened = co_await client_.stream(
      "/v3/watch", coord::etcdWatchRangeRequest(coord::fenceRoot(config_.etcd_prefix), key + '\0', start_revision));
  if (!opened) co_return "watch: " + opened.error();
  watch_stream_ = std::shared_ptr<EtcdStream>(std::move(*opened));
  auto stream = watch_stream_;
  for (;;) {
    auto line = co_await stream->nextLine();
    if (!line) co_return line.error();
    auto message = coord::parseEtcdWatchLine(*line);
    if (!message) co_return "watch: " + message.error();
    if (message->canceled) {
      co_return fmt::format("watch canceled by etcd ({}{})", message->cancel_reason,
                            message->compact_revision ? fmt::format(", compacted at {}", message->compact_revision) : "");
    }
    for (const auto& event : message->events) {
      if (coord::parseHaKey(config_.etcd_prefix, event.kv.key)) {
        onHaEvent(event);
        continue;
      }
      if (coord::isLimitKey(config_.etcd_prefix, event.kv.key)) {
        limits_->onEvent(event);
        continue;
      }
      if (event.kv.key != key) {
        onFenceEvent(event);
        continue;
      }
      // Read already (the session's first read is newer than where the watch starts).
      if (event.kv.mod_revision <= seen_revision_) continue;
      seen_revision_ = event.kv.mod_revision;
      if (event.is_delete) {
        spdlog::error("fleet {}: {} was deleted in etcd; still serving the map in force (publish one with RELOAD)",
                      config_.name, key);
        maps_.forgetFleetRevision();
        continue;
      }
      auto published = coord::decodePublishedMap(event.kv.value);
      if (!published) {
        spdlog::error("fleet {}: revision {}: {}", config_.name, event.kv.mod_revision, published.error());
        continue;
      }
      auto outcome =
          maps_.applyFromFleet({published->source, published->published_by, published->note, event.kv.mod_revision});
      if (outcome.verdict == SwapVerdict::kRefused) {
        spdlog::error("fleet {}: map version {} (revision {}) from {} does not validate here; still serving version {}",
                      config_.name, published->version, event.kv.mod_revision, published->published_by,
                      outcome.old_version);
      }
    }
  }
}

awaitable<std::string> FleetAgent::keepAlive(int64_t lease) {
  auto executor = co_await asio::this_coro::executor;
  const auto period = std::chrono::milliseconds(config_.lease_ttl_s * 1000 / 3);
  for (unsigned tick = 1;; ++tick) {
    asio::steady_timer timer(executor, period);
    co_await timer.async_wait(kNoThrow);
    if (stopping_.load()) co_return "stopping";
    auto answer = co_await client_.call("/v3/lease/keepalive", coord::etcdLeaseKeepAliveRequest(lease));
    if (!answer) co_return "lease keepalive: " + answer.error();
    auto kept = coord::parseEtcdLeaseKeepAlive(*answer);
    if (!kept) co_return "lease keepalive: " + kept.error();
    if (kept->ttl <= 0) co_return fmt::format("lease {} expired", lease);
    fences_->sweep();
    co_await countMembers();
    if (tick % 3 == 0) {
      if (auto missed = co_await checkWatch(); !missed.empty()) co_return missed;
    }
  }
}

// Once per keepalive: how many proxies are alive (their member keys, under
// their leases), for the statement limits' per-proxy shares. Not answered:
// the last count stays (the session's own checks end it if etcd is gone).
awaitable<void> FleetAgent::countMembers() {
  if (context_.statement_limits == nullptr || context_.statement_limits->empty()) co_return;
  auto answer = co_await client_.call("/v3/kv/range",
                                      coord::etcdRangeRequest(coord::membersPrefix(config_.etcd_prefix), true, true));
  if (!answer) co_return;
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return;
  // This proxy counts even before its own key is put (a session's first count).
  const std::string mine = coord::memberKey(config_.etcd_prefix, config_.name);
  const bool listed = std::any_of(range->kvs.begin(), range->kvs.end(), [&](const auto& kv) { return kv.key == mine; });
  const auto alive = static_cast<uint32_t>(range->kvs.size() + (listed ? 0 : 1));
  if (alive != context_.statement_limits->fleetProxies()) {
    spdlog::info("fleet {}: {} proxies alive: statement limits shared {} ways", config_.name, alive, alive);
    context_.statement_limits->setFleetProxies(alive);
  }
}

// Once per lease period: the map's revision, read without its value. A
// watch that fell silent (its member cut off) shows as a newer revision
// here; the session then restarts with a full read.
awaitable<std::string> FleetAgent::checkWatch() {
  auto answer = co_await client_.call("/v3/kv/range", coord::etcdRangeRequest(coord::mapKey(config_.etcd_prefix), false, true));
  if (!answer) co_return "read the map's revision: " + answer.error();
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return range.error();
  if (range->kvs.empty()) co_return std::string();
  int64_t published = range->kvs.front().mod_revision;
  if (published > seen_revision_ && published == last_checked_revision_) {
    // Seen twice, a lease period apart: not an event in flight.
    co_return fmt::format("the watch missed revision {} of the map (last seen: {})", published, seen_revision_);
  }
  last_checked_revision_ = published;
  co_return std::string();
}

awaitable<void> FleetAgent::putMember() {
  int64_t lease = lease_.load();
  if (lease == 0) co_return;
  auto put = co_await client_.call("/v3/kv/put", coord::etcdPutRequest(coord::memberKey(config_.etcd_prefix, config_.name),
                                                                      coord::encodeMemberRecord(member_), lease));
  if (!put) spdlog::warn("fleet {}: could not update {}: {}", config_.name, config_.name, put.error());
}

void FleetAgent::applied(const routing::CompiledShardMap& map, int64_t revision) {
  coord::MemberRecord record;
  record.name = config_.name;
  record.admin = admin_address_;
  record.version = map.version();
  record.checksum = map.checksum();
  record.map_revision = revision;
  record.applied_at = utcNowMillis();
  context_.fleet_map_revision.store(revision);
  auto update = [this, record] {
    if (record.checksum == member_.checksum && record.map_revision == member_.map_revision) return;
    member_ = record;
    memberChanged();
  };
  // From the watch (this thread) at once; from the admin thread through the agent's loop.
  if (io_.get_executor().running_in_this_thread()) update();
  else asio::post(io_, update);
}

void FleetAgent::memberChanged() {
  // One put at a time, the last record last: two puts on two connections could land in either order.
  if (member_put_running_) {
    member_dirty_ = true;
    return;
  }
  member_put_running_ = true;
  asio::co_spawn(
      io_,
      [this]() -> awaitable<void> {
        do {
          member_dirty_ = false;
          co_await putMember();
        } while (member_dirty_);
        member_put_running_ = false;
      },
      asio::detached);
}

std::expected<int64_t, std::string> FleetAgent::publish(const routing::CompiledShardMap& map, int64_t expected_revision,
                                                        const std::string& who, const std::string& note,
                                                        const coord::EtcdGuard* guard) {
  coord::PublishedMap record{map.version(), map.checksum(), map.sourceText(), config_.name + " " + who, note};
  const std::string key = coord::mapKey(config_.etcd_prefix);
  std::string body = coord::etcdCasPutRequest(key, expected_revision, coord::encodePublishedMap(record), guard);
  auto answer = runEtcdCall<std::expected<std::string, std::string>>(
      [&](EtcdClient& c) { return c.call("/v3/kv/txn", body); }, client_);
  if (!answer) {
    return std::unexpected(
        "the coordination store (etcd) is unreachable, nothing was published: " + answer.error() +
        " (the proxies keep serving the map in force; retry when etcd answers)");
  }
  auto txn = coord::parseEtcdTxn(*answer);
  if (!txn) return std::unexpected(txn.error());
  if (txn->succeeded) return txn->header.revision;
  std::string current = "none";
  int64_t current_revision = txn->range_kvs.empty() ? 0 : txn->range_kvs.front().mod_revision;
  if (guard && current_revision == expected_revision) {
    return std::unexpected(fmt::format("the move's fence ({}) was lifted before the switch (the mover's lease "
                                       "expired?); nothing was published",
                                       guard->key));
  }
  if (!txn->range_kvs.empty()) {
    const auto& kv = txn->range_kvs.front();
    auto other = coord::decodePublishedMap(kv.value);
    current = other ? fmt::format("version {} at revision {}, published by {}", other->version, kv.mod_revision,
                                  other->published_by)
                    : fmt::format("revision {}", kv.mod_revision);
  }
  return std::unexpected(fmt::format(
      "the fleet's map changed since this proxy applied revision {} (now: {}); nothing was published: this proxy "
      "applies the fleet's map in a moment, then RELOAD again if still needed",
      expected_revision, current));
}

std::expected<std::vector<coord::MemberRecord>, std::string> FleetAgent::members() {
  const std::string prefix = coord::membersPrefix(config_.etcd_prefix);
  auto answer = runEtcdCall<std::expected<std::string, std::string>>(
      [&](EtcdClient& c) { return c.call("/v3/kv/range", coord::etcdRangeRequest(prefix, true)); }, client_);
  if (!answer) return std::unexpected("the coordination store (etcd) is unreachable: " + answer.error());
  auto range = coord::parseEtcdRange(*answer);
  if (!range) return std::unexpected(range.error());
  std::vector<coord::MemberRecord> out;
  for (const auto& kv : range->kvs) {
    auto m = coord::decodeMemberRecord(kv.value);
    if (!m) continue;
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace sp::proxy
