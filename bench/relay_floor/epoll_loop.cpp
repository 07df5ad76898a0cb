// The epoll relay, in two flavours that differ only in when they read:
//  - Mode::Epoll keeps its own readiness per socket: a read shorter than the
//    free space drained the socket, so the next read waits for the next
//    edge-triggered event (no read ever returns EAGAIN except after a stale
//    event);
//  - Mode::EpollSpeculative also reads the socket it has just sent to right
//    after each send, whether or not an event said so, which is what Asio's
//    reactor does when the proxy queues the read for the answer to what it
//    sent (one EAGAIN per send, most of the time).
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "relay.hpp"
#include "sockets.hpp"

namespace relay {
namespace {

struct Session;

struct Side {
  Session* session = nullptr;
  int fd = -1;
  bool readable = true;  // until a short read or EAGAIN says otherwise
  bool writable = true;  // until a short send or EAGAIN says otherwise
};

// Bytes flowing from one side to the other, held in a bounded buffer.
struct Direction {
  Side* src = nullptr;
  Side* dst = nullptr;
  std::unique_ptr<char[]> buf;
  size_t off = 0, len = 0;
};

struct Session {
  Side client, backend;
  Direction up, down;  // client -> backend, backend -> client
  bool dead = false;
};

enum class Step { Idle, Progress, Closed };

class EpollRelay {
 public:
  explicit EpollRelay(const LoopConfig& cfg) : cfg_(cfg) {}
  ~EpollRelay() {
    for (auto& s : sessions_)
      if (!s->dead) closeSession(*s);
    if (listener_ >= 0) close(listener_);
    if (ep_ >= 0) close(ep_);
  }

  const char* run() {
    listener_ = listenLoopback(cfg_.listen_port, true);
    if (listener_ < 0) return "cannot listen on the relay port";
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return "epoll_create1 failed";
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: accept until EAGAIN anyway
    ev.data.ptr = nullptr;
    epoll_ctl(ep_, EPOLL_CTL_ADD, listener_, &ev);
    epoll_event events[256];
    while (!g_stop.load(std::memory_order_relaxed)) {
      int n = epoll_wait(ep_, events, 256, kWaitMs);
      if (n < 0 && errno != EINTR) return "epoll_wait failed";
      for (int i = 0; i < n; ++i) onEvent(events[i]);
      reapDead();
    }
    return "";
  }

 private:
  void onEvent(const epoll_event& ev) {
    if (ev.data.ptr == nullptr) return acceptAll();
    auto* side = static_cast<Side*>(ev.data.ptr);
    Session& s = *side->session;
    if (s.dead) return;
    if (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) side->readable = true;
    if (ev.events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) side->writable = true;
    drive(s);
  }

  void acceptAll() {
    for (;;) {
      int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a transient error: the next event retries
      tuneAccepted(fd, true);
      int backend = connectLoopback(cfg_.backend_port, true);
      if (backend < 0) {
        close(fd);  // the client sees a closed connection, as with a dead backend
        continue;
      }
      auto s = std::make_unique<Session>();
      s->client = Side{s.get(), fd};
      s->backend = Side{s.get(), backend};
      s->up = Direction{&s->client, &s->backend, std::make_unique<char[]>(cfg_.direction_bytes)};
      s->down = Direction{&s->backend, &s->client, std::make_unique<char[]>(cfg_.direction_bytes)};
      // Both directions' events once, edge-triggered: no epoll_ctl per query.
      for (Side* side : {&s->client, &s->backend}) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        ev.data.ptr = side;
        epoll_ctl(ep_, EPOLL_CTL_ADD, side->fd, &ev);
      }
      sessions_.push_back(std::move(s));
      drive(*sessions_.back());  // the server greets first: its bytes may be there
    }
  }

  // Moves bytes both ways until neither direction can progress.
  void drive(Session& s) {
    for (;;) {
      Step up = pump(s.up, s.down);
      if (up == Step::Closed) return closeSession(s);
      Step down = pump(s.down, s.up);
      if (down == Step::Closed) return closeSession(s);
      if (up == Step::Idle && down == Step::Idle) return;
    }
  }

  // One send or one receive on d; `reverse` is the direction whose source
  // is d's destination (the one a speculative read after a send targets).
  Step pump(Direction& d, Direction& reverse) {
    if (d.len > 0) {
      if (!d.dst->writable) return Step::Idle;
      ssize_t n = send(d.dst->fd, d.buf.get() + d.off, d.len, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno != EAGAIN) return Step::Closed;
        d.dst->writable = false;
        return Step::Idle;
      }
      d.off += static_cast<size_t>(n);
      d.len -= static_cast<size_t>(n);
      if (d.len > 0) d.dst->writable = false;  // the kernel's buffer is full
      else d.off = 0;
      if (cfg_.mode == Mode::EpollSpeculative) reverse.src->readable = true;
      return Step::Progress;
    }
    if (!d.src->readable) return Step::Idle;
    ssize_t n = recv(d.src->fd, d.buf.get(), cfg_.direction_bytes, 0);
    if (n == 0) return Step::Closed;
    if (n < 0) {
      if (errno != EAGAIN) return Step::Closed;
      d.src->readable = false;
      return Step::Idle;
    }
    d.len = static_cast<size_t>(n);
    // Shorter than asked: the socket is drained, the next bytes raise an edge.
    if (d.len < cfg_.direction_bytes) d.src->readable = false;
    return Step::Progress;
  }

  // Sessions are freed after the event batch: a later event of the same
  // batch may still point at them.
  void closeSession(Session& s) {
    if (s.dead) return;
    s.dead = true;
    ++dead_;
    close(s.client.fd);
    close(s.backend.fd);
  }

  void reapDead() {
    if (dead_ == 0) return;
    std::erase_if(sessions_, [](const std::unique_ptr<Session>& s) { return s->dead; });
    dead_ = 0;
  }

  LoopConfig cfg_;
  int listener_ = -1, ep_ = -1;
  size_t dead_ = 0;
  std::vector<std::unique_ptr<Session>> sessions_;
};

}  // namespace

const char* runEpollLoop(const LoopConfig& cfg) {
  EpollRelay relay(cfg);
  return relay.run();
}

}  // namespace relay
