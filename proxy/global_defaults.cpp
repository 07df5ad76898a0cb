#include "proxy/global_defaults.hpp"

#include <algorithm>

#include "proxy/backend_connection.hpp"

namespace sp::proxy {

namespace {
std::atomic<uint64_t> globals_epoch{1};
}  // namespace

uint64_t currentGlobalsEpoch() { return globals_epoch.load(std::memory_order_acquire); }

void advanceGlobalsEpoch() { globals_epoch.fetch_add(1, std::memory_order_acq_rel); }

bool changesGlobalDefaults(const parser::StatementInfo& info) {
  if (info.kind != parser::StatementKind::kSet) return false;
  return std::any_of(info.settings.begin(), info.settings.end(), [](const parser::SessionSetting& s) {
    return s.kind == parser::SessionSetting::Kind::kGlobalVariable;
  });
}

awaitable<bool> refreshGlobalDefaults(BackendConnection& conn, uint64_t session_epoch) {
  if (conn.globalsEpoch() >= session_epoch) co_return true;
  co_return co_await conn.resetSession();
}

}  // namespace sp::proxy
