// Partition upkeep: ENSURE PARTITIONS with its result in the logs and the
// lifecycle counters, by hand (admin port) or every partitions.check_every
// on a thread of its own (tg design, section 3: the next month exists before
// it starts, so a write never fails for want of a partition).
#pragma once
#include <expected>
#include <string>
#include <string_view>
#include <thread>

#include "proxy/net/net.hpp"
#include "proxy/lifecycle/partition_admin.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

// ensurePartitions, then the counters and one log line per changed or failed
// shard plus a summary; `who` is "upkeep" or "admin:<user>".
awaitable<std::expected<EnsureOutcome, std::string>> runPartitionUpkeep(ProxyContext& context, std::string_view table,
                                                                        uint32_t ahead, routing::MonthIndex now,
                                                                        std::string who);

class PartitionUpkeep {
 public:
  explicit PartitionUpkeep(ProxyContext& context) : context_(context) {}
  ~PartitionUpkeep() { stop(); }
  // Starts the thread when partitions.check_every is set; the first run is immediate.
  void start();
  void stop();  // idempotent

 private:
  awaitable<void> loop();

  ProxyContext& context_;
  asio::io_context io_{1};
  std::thread thread_;
};

}  // namespace sp::proxy
