// The metrics endpoint (server.metrics_listen): GET /metrics answers the
// Prometheus text format over a minimal HTTP/1.1 responder on its own thread
// and io_context, like the admin port, so a slow scraper never touches the
// workers. One request per connection (Connection: close), request heads up
// to 8 KiB, 5 s to send one; loopback peers only unless
// server.metrics_allow_remote. A scrape copies each worker's counters on that
// worker's thread (collectMetrics) and adds them up.
#pragma once
#include <memory>
#include <string>

#include "proxy/admin/metrics_text.hpp"
#include "proxy/net/net.hpp"
#include "proxy/net/side_server.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

// Every worker's counters, pools and caches, summed; plus the process-wide ones.
MetricsSnapshot collectMetrics(ProxyContext& context);

class MetricsServer {
 public:
  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr std::chrono::seconds kRequestTimeout{5};

  explicit MetricsServer(ProxyContext& context);
  ~MetricsServer();

  // Binds server.metrics_listen and starts the thread; returns an error message.
  std::string start();
  void stop();  // thread-safe; idempotent

 private:
  awaitable<void> serve(tcp::socket socket);

  ProxyContext& context_;
  SideServer server_;
};

}  // namespace sp::proxy
