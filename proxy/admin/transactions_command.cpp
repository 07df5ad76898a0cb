#include "proxy/admin/transactions_command.hpp"

#include <fmt/format.h>

#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

namespace {

std::string ageMs(std::chrono::steady_clock::time_point since) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count());
}

}  // namespace

LocalResult showTransactions(const ProxyContext& context) {
  LocalResult r;
  r.columns = {"gtrid", "state", "session", "branches", "backend", "age_ms", "decision", "note"};
  for (const auto& open : context.xa.open()) {
    r.rows.push_back({open.gtrid, std::string(xaPhaseName(open.phase)), std::to_string(open.session),
                      std::to_string(open.branches), "", ageMs(open.since),
                      open.phase == XaPhase::kCommitting ? "commit" : "", ""});
  }
  for (const auto& doubt : context.xa.inDoubt()) {
    r.rows.push_back({doubt.gtrid, "in_doubt", "", "1", doubt.backend, ageMs(doubt.first_seen),
                      doubt.decided ? "commit" : "none", doubt.note});
  }
  // The last branches recovery finished (age: since it finished them), so an
  // operator sees what a pass did after the in-doubt rows are gone.
  for (const auto& done : context.xa.recovered()) {
    r.rows.push_back({done.gtrid, "recovered", "", "1", done.backend, ageMs(done.at),
                      done.committed ? "commit" : "rollback", done.note});
  }
  return r;
}

}  // namespace sp::proxy
