// `scatter:` of the configuration (docs/configuration.md): statements spanning shards.
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>

namespace sp::conf {

// Statements spanning shards (docs/configuration.md, section `scatter`).
enum class MultiShardWrites : uint8_t {
  kRefuse,      // a multi-row INSERT/REPLACE over several shards is refused (9109)
  kBestEffort,  // split per shard and run; parts are not atomic together
};

struct ScatterConfig {
  MultiShardWrites multi_shard_writes = MultiShardWrites::kRefuse;
  uint64_t max_merge_bytes = 256ull << 20;  // rows/groups a merge may buffer per statement
  uint64_t max_merge_bytes_total = 1ull << 30;  // all concurrent scatter merges of the process together
  uint32_t shard_timeout_ms = 0;            // longest wait for a shard's next packet; 0 = none
};

}  // namespace sp::conf
