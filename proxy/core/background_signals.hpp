// Whether a backend is too busy for background work now (background_gate.hpp),
// from what the governor measured over the last check: the clients' statements
// on it and its replicas' lag. Pure, so that the thresholds are unit-tested.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "conf/background_config.hpp"

namespace sp::proxy {

// The upper bound of the bucket holding the q-quantile of a histogram's
// counts (counts[i]: observations in (bounds[i-1], bounds[i]], the last one
// above every bound: +infinity). 0 when there is no observation.
double quantileUpperBound(std::span<const double> bounds, std::span<const uint64_t> counts, double q);

struct BackendSignal {
  std::string backend;
  uint64_t statements = 0;         // over the last check
  double p99_seconds = 0;          // their p99 (a bucket's upper bound)
  std::optional<int64_t> lag_s;    // the furthest-behind replica's Seconds_Behind_Master
  std::string lagging_replica;     // its name
};

// backend -> why its background work waits (only the overloaded ones).
std::map<std::string, std::string> overloadReasons(const conf::BackgroundConfig& limits,
                                                   const std::vector<BackendSignal>& signals);

}  // namespace sp::proxy
