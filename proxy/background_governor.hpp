// Measures, every background.check_ms, what background work yields to
// (proxy/core/background_gate.hpp): each backend's client statements over
// the check (their p99, from the workers' latency histograms) and its
// replicas' lag (the replica monitor's last probe), and publishes to the gate
// which backends are overloaded. A thread of its own: asking the workers for
// their histograms waits for them.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proxy/core/proxy_context.hpp"
#include "proxy/net/net.hpp"
#include "proxy/observe/metrics.hpp"

namespace sp::proxy {

class BackgroundGate;

class BackgroundGovernor {
 public:
  BackgroundGovernor(ProxyContext& context, BackgroundGate& gate) : context_(context), gate_(gate) {}
  ~BackgroundGovernor() { stop(); }
  BackgroundGovernor(const BackgroundGovernor&) = delete;
  BackgroundGovernor& operator=(const BackgroundGovernor&) = delete;

  void start();
  void stop();

 private:
  awaitable<void> run();
  void check();
  // Every backend's statements since the previous check, summed over the workers.
  std::map<std::string, std::vector<uint64_t>> latencyWindows();

  ProxyContext& context_;
  BackgroundGate& gate_;
  std::map<std::string, std::vector<uint64_t>> previous_;  // cumulative counts at the previous check
  std::map<std::string, std::string> reasons_;             // published last
  asio::io_context io_;
  std::thread thread_;
};

}  // namespace sp::proxy
