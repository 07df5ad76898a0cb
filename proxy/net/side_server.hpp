// A side port (metrics, the change stream): one acceptor on a thread and
// io_context of its own, so that its clients never touch the workers; each
// accepted connection is handed to the owner's `serve` coroutine.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "conf/host_port.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class SideServer {
 public:
  using Serve = std::function<awaitable<void>(tcp::socket)>;

  SideServer() = default;
  ~SideServer() { stop(); }
  SideServer(const SideServer&) = delete;
  SideServer& operator=(const SideServer&) = delete;

  // Binds `hp` and starts the thread; an error message naming `key` /
  // `port_name` (side_listener.hpp), empty on success. `bound` receives the
  // address (callers warn when it is not loopback).
  std::string start(const conf::HostPort& hp, const std::string& key, const std::string& port_name,
                    asio::ip::address& bound, Serve serve);
  void stop();  // thread-safe; idempotent

 private:
  awaitable<void> acceptLoop();

  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::string port_name_;
  Serve serve_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace sp::proxy
