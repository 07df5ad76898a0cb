// Socket set-up shared by the relay loops: loopback only.
#pragma once

#include <cstdint>

namespace relay {

// The epoll loops need non-blocking sockets. The io_uring loop needs blocking
// ones: io_uring completes an operation on an O_NONBLOCK socket with EAGAIN
// instead of waiting for readiness itself.

// A TCP listener on 127.0.0.1:port with SO_REUSEPORT, so that each worker
// thread owns one (as the proxy's workers do); -1 on failure.
int listenLoopback(uint16_t port, bool nonblocking);

// A connected TCP_NODELAY socket to 127.0.0.1:port. The connect itself
// blocks: on loopback it completes at once, and it happens once per client
// session, outside the measured query loop. -1 on failure.
int connectLoopback(uint16_t port, bool nonblocking);

// TCP_NODELAY (and O_NONBLOCK if asked) on an accepted socket.
void tuneAccepted(int fd, bool nonblocking);

}  // namespace relay
