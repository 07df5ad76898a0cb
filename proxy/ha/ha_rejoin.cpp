// HaCoordinator, REJOIN BACKEND: a former primary made a replica of the new
// one (docs/availability.md).
#include "proxy/ha/ha_coordinator.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/core/gtid.hpp"
#include "proxy/ha/replica_monitor.hpp"
#include "proxy/ha/replication_sql.hpp"
#include "proxy/ha/server_control.hpp"
#include "proxy/ha/topology_store.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;
using namespace role_change;

awaitable<AdminReply> HaCoordinator::rejoin(const std::string& backend, const std::string& server,
                                            const std::string& who) {
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("REJOIN: unknown backend '" + backend + "'");
  if (server == group.primary) co_return refused("REJOIN: " + server + " is the primary of backend " + backend);
  if (!isServerOf(*config, server)) co_return refused("REJOIN: '" + server + "' is not a server of backend " + backend);
  const auto timeout = std::chrono::milliseconds(context_.config().ha.probe_timeout_ms);
  Control joining{server, *serverLogin(*config, server), nullptr};
  Control primary{group.primary, *serverLogin(*config, group.primary), nullptr};
  for (Control* c : {&joining, &primary}) {
    if (auto e = co_await connect(*c, context_); !e.empty()) co_return refused("REJOIN: cannot connect to " + e);
  }
  // Read-only first: whatever follows, it takes no writes.
  if (auto ro = co_await sql(joining, kSetReadOnly, timeout); !ro) co_return refused("REJOIN: " + ro.error());
  auto own = co_await scalar(joining, kCurrentPosition, timeout);
  auto theirs = co_await scalar(primary, kCurrentPosition, timeout);
  if (!own || !theirs) co_return refused("REJOIN: " + (!own ? own.error() : theirs.error()));
  const bool fenced = std::find(group.fenced.begin(), group.fenced.end(), server) != group.fenced.end();
  if (fenced && !group.promoted_at.empty()) {
    // Anything past the position the primary was promoted at was written on
    // the old side only (GTIDs compare by sequence number: the group's later
    // writes would hide it from the check below).
    if (auto beyond = positionShortfall(group.promoted_at, *own); !beyond || *beyond > 0) {
      co_return refused(fmt::format(
          "REJOIN: {} has {} transactions the primary {} lacks: its position {} goes beyond {}, where {} was promoted "
          "(writes the failover lost: never acknowledged with semi-sync AFTER_SYNC). It cannot replicate from {} as "
          "it is; rebuild it from a copy of {} (docs/operations.md, \"Rejoin\")",
          server, beyond ? std::to_string(*beyond) : "unknown", group.primary, *own, group.promoted_at, group.primary,
          group.primary, group.primary));
    }
  }
  if (auto missing = positionShortfall(*theirs, *own); !missing || *missing > 0) {
    co_return refused(fmt::format("REJOIN: {} has {} transactions the primary {} lacks ({} against {}): writes the "
                                  "failover lost, or writes made outside the proxy. It cannot replicate from {} as it "
                                  "is; rebuild it from a copy of {} (docs/operations.md, \"Rejoin\")",
                                  server, missing ? std::to_string(*missing) : "unknown", group.primary, *own, *theirs,
                                  group.primary, group.primary));
  }
  if (auto e = co_await follow(joining, *config, primary.login.address, "current_pos", timeout); !e.empty()) {
    co_return refused("REJOIN: " + e);
  }
  std::erase(group.fenced, server);
  if (std::find(group.replicas.begin(), group.replicas.end(), server) == group.replicas.end()) {
    group.replicas.push_back(server);
  }
  group.changed_unix_ms = unixMillis();
  group.change = fmt::format("rejoin {} as a replica of {} ({})", server, group.primary, who);
  if (auto stored = publish(group, false); !stored.empty()) spdlog::error("ha: {}", stored);
  co_return AdminOk{};
}

}  // namespace sp::proxy
