#include "proxy/backend/global_defaults.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "proxy/backend/backend_connection.hpp"

namespace sp::proxy {

namespace {
std::atomic<uint64_t> globals_epoch{1};
std::atomic<uint64_t> connect_limits_epoch{0};

// Session-read-only variables MariaDB copies from the globals when a
// session starts (sys_vars: "SESSION variable ... is read-only").
constexpr std::string_view kConnectTimeVariables[] = {"max_allowed_packet", "net_buffer_length"};
}  // namespace

uint64_t currentGlobalsEpoch() { return globals_epoch.load(std::memory_order_acquire); }

void advanceGlobalsEpoch() { globals_epoch.fetch_add(1, std::memory_order_acq_rel); }

bool changesGlobalDefaults(const parser::StatementInfo& info) {
  if (info.kind != parser::StatementKind::kSet) return false;
  return std::any_of(info.settings.begin(), info.settings.end(), [](const parser::SessionSetting& s) {
    return s.kind == parser::SessionSetting::Kind::kGlobalVariable;
  });
}

bool changesConnectLimits(const parser::StatementInfo& info) {
  if (info.kind != parser::StatementKind::kSet) return false;
  return std::any_of(info.settings.begin(), info.settings.end(), [](const parser::SessionSetting& s) {
    return s.kind == parser::SessionSetting::Kind::kGlobalVariable &&
           std::find(std::begin(kConnectTimeVariables), std::end(kConnectTimeVariables), s.name) !=
               std::end(kConnectTimeVariables);
  });
}

uint64_t currentConnectLimitsEpoch() { return connect_limits_epoch.load(std::memory_order_acquire); }

void markConnectLimitsChanged() {
  // Monotonic: a slower worker marking an older epoch never lowers it.
  const uint64_t now = currentGlobalsEpoch();
  uint64_t seen = connect_limits_epoch.load(std::memory_order_acquire);
  while (seen < now && !connect_limits_epoch.compare_exchange_weak(seen, now, std::memory_order_acq_rel)) {
  }
}

awaitable<bool> refreshGlobalDefaults(BackendConnection& conn, uint64_t session_epoch) {
  if (conn.globalsEpoch() >= session_epoch) co_return true;
  co_return co_await conn.resetSession();
}

}  // namespace sp::proxy
