#include "proxy/observe/abuse_log.hpp"

#include <atomic>
#include <chrono>
#include <spdlog/spdlog.h>

namespace sp::proxy {
namespace {

constexpr int64_t kIntervalMs = 10'000;

struct KindState {
  std::atomic<int64_t> last_logged_ms{-kIntervalMs};
  std::atomic<uint64_t> suppressed{0};
};

KindState g_states[static_cast<size_t>(AbuseKind::kCount)];

std::string_view kindName(AbuseKind kind) {
  switch (kind) {
    case AbuseKind::kMaxConnections: return "connection refused (server.max_connections)";
    case AbuseKind::kPerHost: return "connection refused (server.max_connections_per_host)";
    case AbuseKind::kHandshakeTimeout: return "login not completed in time (server.handshake_timeout_ms)";
    case AbuseKind::kHandshakeTooLarge: return "packet too large before login (server.max_handshake_packet_bytes)";
    case AbuseKind::kIdleTimeout: return "idle session closed (wait_timeout)";
    case AbuseKind::kWriteTimeout: return "session not reading its answer closed (server.net_write_timeout_s)";
    case AbuseKind::kPinnedPerUser: return "statement refused (users[].max_pinned_connections)";
    case AbuseKind::kMergeMemory: return "scatter statement refused (scatter.max_merge_bytes_total)";
    case AbuseKind::kCount: break;
  }
  return "abuse";
}

int64_t nowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void noteAbuse(AbuseKind kind, std::string_view detail) {
  KindState& state = g_states[static_cast<size_t>(kind)];
  const int64_t now = nowMs();
  int64_t last = state.last_logged_ms.load(std::memory_order_relaxed);
  if (now - last < kIntervalMs || !state.last_logged_ms.compare_exchange_strong(last, now)) {
    state.suppressed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t suppressed = state.suppressed.exchange(0, std::memory_order_relaxed);
  if (suppressed == 0) {
    spdlog::warn("{}: {}", kindName(kind), detail);
  } else {
    spdlog::warn("{}: {} ({} more since the last such warning)", kindName(kind), detail, suppressed);
  }
}

}  // namespace sp::proxy
