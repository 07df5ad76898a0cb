// `log:` and `digests:` of the configuration (docs/observability.md).
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <string>

namespace sp::conf {

// Observability (docs/observability.md): query digests and the slow-query log.
struct LogConfig {
  std::string slow_query_file;         // JSON lines; empty = no slow-query log
  uint32_t slow_query_ms = 1000;       // statements taking at least this long are logged
  bool slow_query_keep_values = false; // log literal values as written (default: masked as ?)
};

struct DigestsConfig {
  uint32_t max_entries = 1000;         // distinct normalized statements kept; 0 = digests off
};

}  // namespace sp::conf
