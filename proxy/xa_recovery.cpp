#include "proxy/xa_recovery.hpp"

#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/core/topology.hpp"
#include "proxy/core/xa_decision_log.hpp"
#include "proxy/exec/xa_recovery.hpp"

namespace sp::proxy {

namespace {

using protocol::Command;
// A decision is cleaned up only when every branch was prepared before the
// pass began, i.e. written well before it (decisions follow every prepare).
constexpr int64_t kCleanupMarginMs = 1000;

int64_t unixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
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
  std::set<std::string> seen;
  std::vector<XaRegistry::InDoubt> in_doubt;
  bool all_read = true;
  for (const auto& backend : context_.config().backends) {
    if (!co_await recoverBackend(backend.name, seen, in_doubt)) {
      all_read = false;
      registry.counters.recovery_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }
  registry.setInDoubt(std::move(in_doubt));
  registry.counters.recovery_passes.fetch_add(1, std::memory_order_relaxed);
  if (!all_read) co_return;
  // Decisions no backend lists a branch of any more: every branch committed.
  for (const auto& gtrid : registry.log->decidedBefore(started - kCleanupMarginMs)) {
    if (!seen.contains(gtrid) && !registry.live(gtrid)) registry.log->forget(gtrid);
  }
}

awaitable<bool> XaRecovery::recoverBackend(const std::string& backend, std::set<std::string>& seen,
                                           std::vector<XaRegistry::InDoubt>& in_doubt) {
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
    seen.insert(branch.gtrid);
    const bool live = registry.live(branch.gtrid);  // after the listing: a finished id's decision is final
    const bool decided = !live && registry.log->committed(branch.gtrid);
    const XaResolution what = resolveBranch(live, decided);
    if (what == XaResolution::kLeaveLive) continue;
    const std::string sql = resolutionSql(branch, what);
    auto r = co_await (*conn)->command(Command::kQuery, sql);
    if (r) {
      spdlog::info("XA recovery: {} branch {} of {} on {}", what == XaResolution::kCommit ? "committed" : "rolled back",
                   branch.bqual, branch.gtrid, backend);
      (what == XaResolution::kCommit ? registry.counters.recovered_commits : registry.counters.recovered_rollbacks)
          .fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    spdlog::warn("XA recovery: cannot resolve branch {} of {} on {}: {}", branch.bqual, branch.gtrid, backend,
                 r.error().message);
    in_doubt.push_back({branch.gtrid, backend, branch.bqual, decided, std::chrono::steady_clock::now()});
    ok = false;
  }
  co_return ok;
}

}  // namespace sp::proxy
