// Process-wide state shared by all worker threads: the configuration (read-only
// after start-up) and a few atomic counters and flags.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "conf/config.hpp"
#include "routing/shard_map.hpp"

namespace sp::proxy {

class Worker;

struct ProxyContext {
  conf::Config config;
  std::string server_version = "5.5.5-10.11.0-MariaDB-shardproxy";
  std::atomic<uint32_t> next_connection_id{1};
  std::atomic<uint32_t> sessions{0};
  std::atomic<uint32_t> sessions_in_transaction{0};
  std::atomic<uint64_t> statements{0};
  std::atomic<bool> shutting_down{false};
  // Every worker, set once before they start (KILL finds a session on any of them).
  std::vector<Worker*> workers;

  // The shard map in force. Each statement plans against one snapshot; a
  // reload publishes a new immutable map (null: no sharded tables).
  std::atomic<std::shared_ptr<const routing::CompiledShardMap>> shard_map;
};

}  // namespace sp::proxy
