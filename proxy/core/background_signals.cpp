#include "proxy/core/background_signals.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace sp::proxy {

double quantileUpperBound(std::span<const double> bounds, std::span<const uint64_t> counts, double q) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::infinity();
}

std::map<std::string, std::string> overloadReasons(const conf::BackgroundConfig& limits,
                                                   const std::vector<BackendSignal>& signals) {
  std::map<std::string, std::string> out;
  for (const auto& s : signals) {
    std::string why;
    if (limits.max_foreground_p99_ms > 0 && s.statements >= limits.min_statements &&
        s.p99_seconds * 1000 > limits.max_foreground_p99_ms) {
      const std::string p99 = std::isinf(s.p99_seconds) ? std::string("above every bucket")
                                                        : fmt::format("up to {:g} ms", s.p99_seconds * 1000);
      why = fmt::format("clients' p99 on {} is {} over {} statements (background.max_foreground_p99_ms = {})",
                        s.backend, p99, s.statements, limits.max_foreground_p99_ms);
    }
    if (limits.max_replica_lag_s > 0 && s.lag_s && *s.lag_s > static_cast<int64_t>(limits.max_replica_lag_s)) {
      why += fmt::format("{}replica {} of {} is {} s behind (background.max_replica_lag_s = {})", why.empty() ? "" : "; ",
                         s.lagging_replica, s.backend, *s.lag_s, limits.max_replica_lag_s);
    }
    if (!why.empty()) out.emplace(s.backend, std::move(why));
  }
  return out;
}

}  // namespace sp::proxy
