// A zero-logic byte relay used to measure what any MySQL proxy on this host
// must pay per query for moving bytes (docs/benchmarks.md, "The floor of a
// relay on this VM"). Not part of the proxy: nothing here parses MySQL.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace relay {

enum class Mode { EpollSpeculative, Epoll, Uring };

struct LoopConfig {
  Mode mode = Mode::Epoll;
  uint16_t listen_port = 0;
  uint16_t backend_port = 0;
  // Bytes a direction may hold received but not yet sent; reading from the
  // source stops while it is full (backpressure).
  size_t direction_bytes = 64 * 1024;
  // io_uring only: plain recv SQEs instead of multishot recv over a
  // provided-buffer ring (for kernels without it, or to compare).
  bool uring_plain_recv = false;
};

// Set by SIGINT/SIGTERM or the --time deadline; every loop checks it at
// least every kWaitMs.
extern std::atomic<bool> g_stop;
inline constexpr int kWaitMs = 200;

// Each runs one worker's loop on its own SO_REUSEPORT listener until g_stop.
// They return a message when they cannot start (empty on a clean stop).
const char* runEpollLoop(const LoopConfig& cfg);
const char* runUringLoop(const LoopConfig& cfg);

}  // namespace relay
