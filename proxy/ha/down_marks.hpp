// Which servers the health monitor has the workers' pools treat as down
// (BackendPool::markDown), turned from its picture into edges: one mark when
// a server's probes have failed for ha.failure_timeout_ms, one unmark when
// it answers again (docs/availability.md, "A server that stops answering").
// Pure: the HA coordinator sends the edges to the workers.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conf/ha_config.hpp"
#include "proxy/core/replica_health.hpp"

namespace sp::proxy {

struct DownMark {
  std::string address;  // host:port, as ServerHealth::address
  std::string reason;   // empty: up again
};

class DownMarks {
 public:
  // The change `server`'s last probe makes, if any. A server whose probe
  // was refused with an ERR (full, or the monitor's account refused) is
  // alive: its pools' own connections decide, it is never marked.
  std::optional<DownMark> observe(const ServerHealth& server, const conf::HaConfig& ha);
  // Every server marked down now (sent again after a repoint builds pools).
  std::vector<DownMark> marked() const;

 private:
  std::map<std::string, std::string> down_;  // address -> reason
};

}  // namespace sp::proxy
