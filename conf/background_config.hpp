// `background:` of the configuration (docs/operations.md, "Background work
// yields"): when moves, archiving, partition upkeep and schema changes pause
// so that the foreground on the same backend keeps its latency. Its own
// header (conf/config.hpp holds the whole configuration).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace sp::conf {

struct BackgroundConfig {
  // Background work on a backend pauses while the p99 latency of the
  // clients' statements on it, over the last check, is above this (0: never
  // for latency). Judged only over checks with at least min_statements.
  uint32_t max_foreground_p99_ms = 0;
  uint32_t min_statements = 20;
  // ... or while one of its replicas is further behind than this (0: never
  // for lag): a copy or an ALTER adds to what the replicas must replay.
  uint32_t max_replica_lag_s = 10;
  // A pause lasts at most this long; then one step (a batch, a table) runs
  // anyway, so that background work under a lasting overload slows down
  // instead of never finishing (0: no limit).
  uint32_t max_pause_ms = 10'000;
  // How often the foreground is measured and a pause re-checked.
  uint32_t check_ms = 250;
};

// Each key with its range: read from the config file and set at run time
// (SET BACKGROUND on the admin port) with the same bounds.
struct BackgroundKey {
  std::string_view name;
  uint32_t BackgroundConfig::*member;
  uint32_t min, max;
};
inline constexpr std::array<BackgroundKey, 5> kBackgroundKeys = {{
    {"max_foreground_p99_ms", &BackgroundConfig::max_foreground_p99_ms, 0, 3'600'000},
    {"min_statements", &BackgroundConfig::min_statements, 1, 1'000'000},
    {"max_replica_lag_s", &BackgroundConfig::max_replica_lag_s, 0, 86'400},
    {"max_pause_ms", &BackgroundConfig::max_pause_ms, 0, 3'600'000},
    {"check_ms", &BackgroundConfig::check_ms, 50, 60'000},
}};

}  // namespace sp::conf
