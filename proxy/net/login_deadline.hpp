// The login deadline of a client connection (server.handshake_timeout_ms),
// shared by the application and admin ports.
#pragma once
#include <chrono>
#include <memory>

#include "proxy/net/net.hpp"
#include "proxy/net/packet_stream.hpp"

namespace sp::proxy {

// Closes the client socket if the login is not done by the deadline
// (server.handshake_timeout_ms): a peer that connects and sends nothing,
// trickles its bytes, or starts TLS and stalls, would otherwise hold the socket and a max_connections
// slot forever. Closing aborts the pending read, so the login fails as if
// the client had left. MariaDB (connect_timeout) also just closes.
class LoginDeadline {
 public:
  LoginDeadline(PacketStream& client, std::chrono::milliseconds timeout)
      : timer_(client.socket().get_executor()), state_(std::make_shared<State>()) {
    timer_.expires_after(timeout);
    // The handler may run after this object is gone (a cancelled or already
    // queued wait): it only touches `client` while `done` is false, that is
    // while the handshake, and so the session, is alive.
    timer_.async_wait([state = state_, stream = &client](const error_code& ec) {
      if (ec || state->done) return;
      state->expired = true;
      stream->close();
    });
  }
  ~LoginDeadline() {
    state_->done = true;
    timer_.cancel();
  }
  bool expired() const { return state_->expired; }

 private:
  struct State {
    bool done = false;
    bool expired = false;
  };
  asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

}  // namespace sp::proxy
