// `fleet:` of the configuration (docs/operations.md, "Fleets").
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "conf/host_port.hpp"

namespace sp::conf {

// A fleet of proxies sharing one shard map through etcd (docs/operations.md,
// "Fleets"); absent = the proxy works alone.
struct FleetConfig {
  std::string name;                        // this proxy's name in the fleet (unique)
  std::vector<HostPort> etcd_endpoints;    // from "http://host:port"; tried in turn
  std::string etcd_prefix;                 // "/shardproxy/<cluster>": every key of the fleet under it
  uint32_t request_timeout_ms = 2000;      // one etcd request on one endpoint
  uint32_t lease_ttl_s = 5;                // a proxy vanishes from SHOW FLEET this long after it stops
  uint32_t retry_max_ms = 2000;            // ceiling of the reconnect backoff (starts at 50 ms)
  uint64_t max_response_bytes = 16ull << 20;  // one etcd answer (a range of the map, one watch line)
  uint32_t fence_ack_timeout_ms = 2000;    // a move's cut-over waits this long for every proxy to hold its keys
  uint32_t fence_serve_timeout_ms = 5000;  // after the switch, this long for every live proxy to serve the new map
};

}  // namespace sp::conf
