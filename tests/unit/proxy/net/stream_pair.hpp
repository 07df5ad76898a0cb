// Two PacketStreams connected over loopback, and a way to run coroutines on
// them (packet stream tests: framing, TLS).
#pragma once
#include <boost/asio/co_spawn.hpp>
#include <exception>
#include <memory>

#include "proxy/net/packet_stream.hpp"

namespace sp::proxy {

// A connected pair of streams on loopback.
struct Pair {
  asio::io_context io;
  std::unique_ptr<PacketStream> server;
  std::unique_ptr<PacketStream> client;
  explicit Pair(size_t max_message_bytes = 64u << 20) {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket c(io);
    c.connect(acceptor.local_endpoint());
    tcp::socket s = acceptor.accept();
    server = std::make_unique<PacketStream>(std::move(s), max_message_bytes);
    client = std::make_unique<PacketStream>(std::move(c), 64u << 20);
  }
  template <class F>
  void run(F&& f) {
    asio::co_spawn(io, std::forward<F>(f), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
};

}  // namespace sp::proxy
