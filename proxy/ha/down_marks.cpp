#include "proxy/ha/down_marks.hpp"

#include <fmt/format.h>

namespace sp::proxy {

std::optional<DownMark> DownMarks::observe(const ServerHealth& server, const conf::HaConfig& ha) {
  const bool marked = down_.contains(server.address);
  if (server.state == ServerState::kDown && !server.refused) {
    if (marked) return std::nullopt;
    std::string reason = fmt::format("no answer for ha.failure_timeout_ms ({} ms): {}", ha.failure_timeout_ms,
                                     server.last_error.empty() ? "probes failed" : server.last_error);
    down_.emplace(server.address, reason);
    return DownMark{server.address, std::move(reason)};
  }
  if (marked && (server.answered || server.refused)) {
    down_.erase(server.address);
    return DownMark{server.address, ""};
  }
  return std::nullopt;
}

std::vector<DownMark> DownMarks::marked() const {
  std::vector<DownMark> out;
  for (const auto& [address, reason] : down_) out.push_back({address, reason});
  return out;
}

}  // namespace sp::proxy
