#include "proxy/xa_recovery.hpp"

#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/core/topology.hpp"
#include "proxy/core/xa_decision_log.hpp"
#include "proxy/exec/xa_fleet_resolution.hpp"
#include "proxy/exec/xa_recovery.hpp"

namespace sp::proxy {

namespace {

using protocol::Command;
// A decision is cleaned up only when every branch was prepared before the
// pass began, i.e. written well before it (decisions follow every prepare).
constexpr int64_t kCleanupMarginMs = 1000;
constexpr uint16_t kXaerNota = 1397;  // XAER_NOTA: the server knows no such branch (any more)

int64_t unixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool decidedCommit(const XaFleetSnapshot* fleet, const std::string& gtrid) {
  if (!fleet) return false;
  auto it = fleet->decisions.find(gtrid);
  return it != fleet->decisions.end() && it->second.outcome == XaStoredOutcome::kCommit;
}

}  // namespace

void XaRecovery::start() {
  asio::co_spawn(io_, run(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

void XaRecovery::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

awaitable<void> XaRecovery::run() {
  asio::steady_timer timer(io_);
  for (;;) {
    co_await pass();
    timer.expires_after(std::chrono::milliseconds(context_.config().transactions.recovery_interval_ms));
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

awaitable<void> XaRecovery::pass() {
  auto& registry = context_.xa;
  if (!registry.log) co_return;
  const int64_t started = unixMs();
  Pass pass;
  std::optional<XaFleetSnapshot> snapshot;
  if (registry.fleet) {
    // Read before any backend is listed: a record seen here was written
    // after every prepare of its id, which clean-up relies on.
    auto read = registry.fleet->snapshot();
    if (read) {
      snapshot = std::move(*read);
      pass.fleet = &*snapshot;
      if (etcd_unreadable_) spdlog::info("XA recovery: etcd readable again: fleet branches are resolved again");
      etcd_unreadable_ = false;
    } else {
      pass.etcd_problem = read.error();
      registry.counters.recovery_errors.fetch_add(1, std::memory_order_relaxed);
      if (!etcd_unreadable_) {
        spdlog::warn("XA recovery: cannot read the fleet's decisions from etcd ({}): prepared branches of the "
                     "fleet's ids wait until it answers", read.error());
      }
      etcd_unreadable_ = true;
    }
  }
  bool all_read = true;
  for (const auto& backend : context_.config().backends) {
    if (!co_await recoverBackend(backend.name, pass)) {
      all_read = false;
      registry.counters.recovery_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }
  registry.setInDoubt(std::move(pass.in_doubt));
  registry.counters.recovery_passes.fetch_add(1, std::memory_order_relaxed);
  if (!all_read) co_return;
  // Decisions no backend lists a branch of any more: every branch committed.
  for (const auto& gtrid : registry.log->decidedBefore(started - kCleanupMarginMs)) {
    if (!pass.seen.contains(gtrid) && !registry.live(gtrid)) registry.log->forget(gtrid);
  }
  cleanUpFleet(pass);
}

// Records read before the listing whose id no backend listed: each was
// written after every prepare of its id, so every branch has its outcome.
void XaRecovery::cleanUpFleet(const Pass& pass) {
  if (!pass.fleet) return;
  for (const auto& [gtrid, decision] : pass.fleet->decisions) {
    if (!pass.seen.contains(gtrid) && !context_.xa.live(gtrid)) {
      context_.xa.fleet->remove(gtrid, decision.create_revision);
    }
  }
}

std::optional<bool> XaRecovery::fleetCommit(const std::string& gtrid, const std::string& owner, std::string& note,
                                            const Pass& pass) {
  auto& registry = context_.xa;
  FleetBranchFacts facts;
  facts.own = owner == registry.fleet->member();
  facts.live = registry.live(gtrid);  // after the listing: a finished id's decision is final
  facts.etcd_read = pass.fleet != nullptr;
  if (pass.fleet) {
    facts.owner_registered = pass.fleet->members.contains(owner);
    if (auto it = pass.fleet->decisions.find(gtrid); it != pass.fleet->decisions.end()) facts.decision = it->second.outcome;
  }
  switch (resolveFleetBranch(facts)) {
    case FleetResolution::kLeaveLive: return std::nullopt;
    case FleetResolution::kWaitEtcd: note = "waiting for etcd: " + pass.etcd_problem; return std::nullopt;
    case FleetResolution::kWaitOwner: note = "waiting for proxy " + owner + " (alive)"; return std::nullopt;
    case FleetResolution::kCommit: return true;
    case FleetResolution::kRollback: return false;
    case FleetResolution::kSettle: break;
  }
  auto settled = registry.fleet->settle(gtrid);
  if (!settled) {
    note = "waiting for etcd: " + settled.error();
    return std::nullopt;
  }
  return *settled == XaStoredOutcome::kCommit;
}

awaitable<bool> XaRecovery::recoverBackend(const std::string& backend, Pass& pass) {
  auto& registry = context_.xa;
  auto topology = context_.topology.load();
  if (!topology) co_return false;
  auto login = primaryPoolConfig(context_.config(), *topology, backend);
  if (!login) co_return false;
  auto conn = co_await BackendConnection::open(*login, 0, 16u << 20);
  if (!conn) co_return false;
  auto rows = co_await (*conn)->queryRows("XA RECOVER");
  if (!rows) {
    spdlog::warn("XA recovery: XA RECOVER on {} failed: {}", backend, rows.error().message);
    co_return false;
  }
  bool ok = true;
  for (const auto& branch : ownBranches(*rows, registry.prefix())) {
    pass.seen.insert(branch.gtrid);
    auto owner = gtridOwner(branch.gtrid, registry.prefix());
    const bool fleet_id = registry.fleet && owner && !owner->member.empty();
    std::string note;
    std::optional<bool> commit;
    if (fleet_id) {
      commit = fleetCommit(branch.gtrid, owner->member, note, pass);
    } else if (registry.fleet) {
      // An id of a proxy alone: its decision is in some proxy's SQLite log, maybe not this one's.
      note = "an id without a fleet member name: resolve it where it was decided (XA RECOVER, docs/routing.md)";
    } else {
      const bool live = registry.live(branch.gtrid);  // after the listing: a finished id's decision is final
      const XaResolution what = resolveBranch(live, !live && registry.log->committed(branch.gtrid));
      if (what != XaResolution::kLeaveLive) commit = what == XaResolution::kCommit;
    }
    if (!commit) {
      if (!note.empty()) {
        pass.in_doubt.push_back({branch.gtrid, backend, branch.bqual, decidedCommit(pass.fleet, branch.gtrid),
                                 std::chrono::steady_clock::now(), note});
      }
      continue;
    }
    const XaResolution what = *commit ? XaResolution::kCommit : XaResolution::kRollback;
    auto r = co_await (*conn)->command(Command::kQuery, resolutionSql(branch, what));
    const bool for_other = fleet_id && owner->member != registry.fleet->member();
    const std::string whose = for_other ? "for proxy " + owner->member + " (gone)" : "own";
    if (r) {
      spdlog::info("XA recovery: {} branch {} of {} on {} ({})", *commit ? "committed" : "rolled back", branch.bqual,
                   branch.gtrid, backend, whose);
      (*commit ? registry.counters.recovered_commits : registry.counters.recovered_rollbacks)
          .fetch_add(1, std::memory_order_relaxed);
      if (for_other) registry.counters.recovered_for_others.fetch_add(1, std::memory_order_relaxed);
      registry.addRecovered({branch.gtrid, backend, *commit, whose, std::chrono::steady_clock::now()});
      continue;
    }
    if (r.error().kind == BackendError::Kind::kServer && r.error().code == kXaerNota) {
      // Finished between the listing and now: by its commit, or by another member's recovery (same outcome).
      spdlog::info("XA recovery: branch {} of {} on {} was finished meanwhile", branch.bqual, branch.gtrid, backend);
      continue;
    }
    spdlog::warn("XA recovery: cannot resolve branch {} of {} on {}: {}", branch.bqual, branch.gtrid, backend,
                 r.error().message);
    pass.in_doubt.push_back({branch.gtrid, backend, branch.bqual, *commit, std::chrono::steady_clock::now(),
                             r.error().message});
    ok = false;
  }
  co_return ok;
}

}  // namespace sp::proxy
