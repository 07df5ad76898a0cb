// GET /changes on changes.listen (docs/changes.md): newline-delimited JSON
// over HTTP/1.1 chunked transfer, one connection per stream, on a thread and
// io_context of its own. Each transaction's lines go out as one chunk; an
// idle stream gets a heartbeat line every changes.heartbeat_ms. A consumer
// that reads nothing for changes.send_timeout_ms is cut off; while it reads
// slowly the stream's readers wait (nothing is buffered beyond
// changes.buffer_events). Loopback peers only unless changes.allow_remote.
#pragma once
#include <string>

#include "proxy/net/net.hpp"
#include "proxy/net/side_server.hpp"

namespace sp::proxy::changes {

class ChangeService;

class ChangesHttpServer {
 public:
  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr std::chrono::seconds kRequestTimeout{5};

  explicit ChangesHttpServer(ChangeService& service) : service_(service) {}
  ~ChangesHttpServer() { stop(); }
  std::string start();
  void stop();

 private:
  awaitable<void> serve(tcp::socket socket);

  ChangeService& service_;
  SideServer server_;
};

}  // namespace sp::proxy::changes
