// The io_uring relay: every session's operations of one loop iteration go
// to the kernel in one io_uring_enter, which also waits for the next
// completions. Receives are multishot over a provided-buffer ring (a socket
// with nothing to read holds no buffer; one SQE serves every answer), or
// plain recv SQEs into a per-direction buffer when the kernel cannot
// register a buffer ring (or --uring-plain-recv asks for it). Sends are SQEs,
// one in flight per direction so that bytes stay in order.
#include <liburing.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <memory>
#include <vector>

#include "relay.hpp"
#include "sockets.hpp"

namespace relay {
namespace {

constexpr unsigned kRingEntries = 1024;
constexpr unsigned kBufferCount = 1024;  // provided buffers per worker (a power of two)
constexpr unsigned kBufferBytes = 16 * 1024;
constexpr int kBufferGroup = 0;

// What a completion is about, in the low bits of its user_data; the rest is
// the session pointer (sessions are at least 8-byte aligned).
enum Op : uint64_t { RecvUp = 0, RecvDown = 1, SendUp = 2, SendDown = 3, Accept = 4, Ignore = 5 };
constexpr uint64_t kOpMask = 7;

struct Chunk {
  uint16_t bid;  // provided buffer id (multishot), unused in plain mode
  uint32_t off, len;
};

struct Direction {
  int src = -1, dst = -1;
  std::deque<Chunk> queue;  // received, not yet sent (multishot)
  size_t queued_bytes = 0;
  std::unique_ptr<char[]> plain;  // plain mode: the one receive buffer
  bool recv_armed = false, cancel_sent = false, send_inflight = false;
  bool wants_buffers = false;  // multishot ended with ENOBUFS
};

struct Session {
  Direction up, down;  // client -> backend, backend -> client
  int client = -1, backend = -1;
  int inflight = 0;  // operations whose last completion has not arrived
  bool closing = false;
};

class UringRelay {
 public:
  explicit UringRelay(const LoopConfig& cfg) : cfg_(cfg), multishot_(!cfg.uring_plain_recv) {}
  ~UringRelay() {
    if (ring_ready_) io_uring_queue_exit(&ring_);  // cancels whatever is in flight
    for (Session* s : sessions_) {
      close(s->client);
      close(s->backend);
      delete s;
    }
    if (buffers_) munmap(buffers_, size_t{kBufferCount} * kBufferBytes);
    if (buf_ring_) munmap(buf_ring_, kBufferCount * sizeof(io_uring_buf));
    if (listener_ >= 0) close(listener_);
  }

  const char* run() {
    listener_ = listenLoopback(cfg_.listen_port, false);
    if (listener_ < 0) return "cannot listen on the relay port";
    if (const char* err = setUpRing(); *err) return err;
    if (multishot_ && !setUpBufferRing()) {
      std::fprintf(stderr, "relay_floor: no provided-buffer ring, plain recv SQEs instead\n");
      multishot_ = false;
    }
    armAccept();
    __kernel_timespec wait{.tv_sec = 0, .tv_nsec = kWaitMs * 1000000LL};
    while (!g_stop.load(std::memory_order_relaxed)) {
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR) return "io_uring_submit_and_wait_timeout failed";
      unsigned head, seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        onCompletion(*cqe);
        ++seen;
      }
      io_uring_cq_advance(&ring_, seen);
      rearmStarved();
      reapClosed();
    }
    return "";
  }

 private:
  const char* setUpRing() {
    // DEFER_TASKRUN: the kernel finishes completions only when this thread
    // enters to wait, instead of interrupting it (kernel 6.1); fall back.
    io_uring_params p{};
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (io_uring_queue_init_params(kRingEntries, &ring_, &p) < 0) {
      p = io_uring_params{};
      p.flags = IORING_SETUP_COOP_TASKRUN;
      if (io_uring_queue_init_params(kRingEntries, &ring_, &p) < 0) {
        p = io_uring_params{};
        if (io_uring_queue_init_params(kRingEntries, &ring_, &p) < 0) return "io_uring_queue_init failed";
      }
    }
    ring_ready_ = true;
    if (!(p.features & IORING_FEAT_EXT_ARG)) return "kernel lacks IORING_FEAT_EXT_ARG (timed waits)";
    return "";
  }

  bool setUpBufferRing() {
    void* ring_mem = mmap(nullptr, kBufferCount * sizeof(io_uring_buf), PROT_READ | PROT_WRITE,
                          MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    void* buf_mem = mmap(nullptr, size_t{kBufferCount} * kBufferBytes, PROT_READ | PROT_WRITE,
                         MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (ring_mem == MAP_FAILED || buf_mem == MAP_FAILED) return false;
    buf_ring_ = static_cast<io_uring_buf_ring*>(ring_mem);
    buffers_ = static_cast<char*>(buf_mem);
    io_uring_buf_ring_init(buf_ring_);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<uint64_t>(buf_ring_);
    reg.ring_entries = kBufferCount;
    reg.bgid = kBufferGroup;
    if (io_uring_register_buf_ring(&ring_, &reg, 0) != 0) return false;
    for (unsigned i = 0; i < kBufferCount; ++i)
      io_uring_buf_ring_add(buf_ring_, buffers_ + size_t{i} * kBufferBytes, kBufferBytes, i,
                            io_uring_buf_ring_mask(kBufferCount), i);
    io_uring_buf_ring_advance(buf_ring_, kBufferCount);
    return true;
  }

  // A free SQE; when the queue is full, what is in it goes to the kernel first.
  io_uring_sqe* sqe() {
    io_uring_sqe* e = io_uring_get_sqe(&ring_);
    while (e == nullptr) {
      io_uring_submit(&ring_);
      e = io_uring_get_sqe(&ring_);
    }
    return e;
  }

  static uint64_t tag(Session* s, Op op) { return reinterpret_cast<uint64_t>(s) | op; }

  void armAccept() {
    io_uring_sqe* e = sqe();
    io_uring_prep_accept(e, listener_, nullptr, nullptr, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(e, tag(nullptr, Accept));
  }

  void armRecv(Session& s, Direction& d, Op op) {
    io_uring_sqe* e = sqe();
    if (multishot_) {
      io_uring_prep_recv_multishot(e, d.src, nullptr, 0, 0);
      e->flags |= IOSQE_BUFFER_SELECT;
      e->buf_group = kBufferGroup;
    } else {
      io_uring_prep_recv(e, d.src, d.plain.get(), cfg_.direction_bytes, 0);
    }
    io_uring_sqe_set_data64(e, tag(&s, op));
    d.recv_armed = true;
    ++s.inflight;
  }

  void armSend(Session& s, Direction& d, Op op) {
    const Chunk& c = d.queue.front();
    const char* base = multishot_ ? buffers_ + size_t{c.bid} * kBufferBytes : d.plain.get();
    io_uring_sqe* e = sqe();
    io_uring_prep_send(e, d.dst, base + c.off, c.len, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(e, tag(&s, op));
    d.send_inflight = true;
    ++s.inflight;
  }

  // Backpressure: a direction holding its share stops its multishot receive.
  void cancelRecv(Session& s, Direction& d, Op op) {
    io_uring_sqe* e = sqe();
    io_uring_prep_cancel64(e, tag(&s, op), 0);
    io_uring_sqe_set_data64(e, tag(nullptr, Ignore));
    d.cancel_sent = true;
  }

  void onCompletion(const io_uring_cqe& cqe) {
    auto op = static_cast<Op>(cqe.user_data & kOpMask);
    auto* s = reinterpret_cast<Session*>(cqe.user_data & ~kOpMask);
    switch (op) {
      case Accept: return onAccept(cqe.res);
      case Ignore: return;
      case RecvUp: return onRecv(*s, s->up, RecvUp, SendUp, cqe);
      case RecvDown: return onRecv(*s, s->down, RecvDown, SendDown, cqe);
      case SendUp: return onSend(*s, s->up, RecvUp, SendUp, cqe.res);
      case SendDown: return onSend(*s, s->down, RecvDown, SendDown, cqe.res);
    }
  }

  void onAccept(int fd) {
    armAccept();
    if (fd < 0) return;  // a transient error: the next accept retries
    tuneAccepted(fd, false);
    int backend = connectLoopback(cfg_.backend_port, false);
    if (backend < 0) {
      close(fd);
      return;
    }
    auto* s = new Session;
    s->client = fd;
    s->backend = backend;
    s->up.src = s->down.dst = fd;
    s->up.dst = s->down.src = backend;
    if (!multishot_) {
      s->up.plain = std::make_unique<char[]>(cfg_.direction_bytes);
      s->down.plain = std::make_unique<char[]>(cfg_.direction_bytes);
    }
    sessions_.push_back(s);
    armRecv(*s, s->up, RecvUp);
    armRecv(*s, s->down, RecvDown);
  }

  void onRecv(Session& s, Direction& d, Op recv_op, Op send_op, const io_uring_cqe& cqe) {
    bool more = multishot_ && (cqe.flags & IORING_CQE_F_MORE);
    if (!more) {
      d.recv_armed = false;
      d.cancel_sent = false;
      --s.inflight;
    }
    if (cqe.res > 0) {
      uint16_t bid = multishot_ ? static_cast<uint16_t>(cqe.flags >> IORING_CQE_BUFFER_SHIFT) : 0;
      if (s.closing) {
        if (multishot_) returnBuffer(bid);
        return;
      }
      d.queue.push_back(Chunk{bid, 0, static_cast<uint32_t>(cqe.res)});
      d.queued_bytes += static_cast<size_t>(cqe.res);
      if (!d.send_inflight) armSend(s, d, send_op);
      if (multishot_ && d.recv_armed && !d.cancel_sent && d.queued_bytes >= cfg_.direction_bytes)
        cancelRecv(s, d, recv_op);
    } else if (cqe.res == -ENOBUFS && multishot_) {
      d.wants_buffers = true;  // rearmStarved() retries once buffers come back
      starved_ = true;
    } else if (cqe.res != -ECANCELED) {
      return closeSession(s);  // 0 is the peer's EOF, anything else an error
    }
    if (multishot_ && !d.recv_armed && !s.closing && !d.wants_buffers &&
        d.queued_bytes < cfg_.direction_bytes)
      armRecv(s, d, recv_op);
  }

  void onSend(Session& s, Direction& d, Op recv_op, Op send_op, int res) {
    --s.inflight;
    d.send_inflight = false;
    if (s.closing) return;
    if (res <= 0) return closeSession(s);
    Chunk& c = d.queue.front();
    c.off += static_cast<uint32_t>(res);
    c.len -= static_cast<uint32_t>(res);
    d.queued_bytes -= static_cast<size_t>(res);
    if (c.len == 0) {
      if (multishot_) returnBuffer(c.bid);
      d.queue.pop_front();
    }
    if (!d.queue.empty()) return armSend(s, d, send_op);
    // Plain mode receives again only once everything received has left;
    // multishot re-arms here when backpressure had cancelled it.
    if (!d.recv_armed && !d.wants_buffers && d.queued_bytes < cfg_.direction_bytes) armRecv(s, d, recv_op);
  }

  void returnBuffer(uint16_t bid) {
    io_uring_buf_ring_add(buf_ring_, buffers_ + size_t{bid} * kBufferBytes, kBufferBytes, bid,
                          io_uring_buf_ring_mask(kBufferCount), 0);
    io_uring_buf_ring_advance(buf_ring_, 1);
  }

  void dropQueue(Direction& d) {
    if (multishot_)
      for (const Chunk& c : d.queue) returnBuffer(c.bid);
    d.queue.clear();
    d.queued_bytes = 0;
  }

  void rearmStarved() {
    if (!starved_) return;
    starved_ = false;
    for (Session* s : sessions_) {
      if (s->closing) continue;
      if (s->up.wants_buffers) s->up.wants_buffers = false, armRecv(*s, s->up, RecvUp);
      if (s->down.wants_buffers) s->down.wants_buffers = false, armRecv(*s, s->down, RecvDown);
    }
  }

  // shutdown() ends the session's pending receives (they complete with 0)
  // and sends (EPIPE); it is freed, and its queued buffers go back to the
  // ring, once the last of them has completed (a send in flight still reads
  // its buffer).
  void closeSession(Session& s) {
    if (s.closing) return;
    s.closing = true;
    ++closing_;
    shutdown(s.client, SHUT_RDWR);
    shutdown(s.backend, SHUT_RDWR);
  }

  void reapClosed() {
    if (closing_ == 0) return;
    std::erase_if(sessions_, [this](Session* s) {
      if (!s->closing || s->inflight > 0) return false;
      dropQueue(s->up);
      dropQueue(s->down);
      close(s->client);
      close(s->backend);
      delete s;
      --closing_;
      return true;
    });
  }

  LoopConfig cfg_;
  bool multishot_;
  io_uring ring_{};
  bool ring_ready_ = false;
  io_uring_buf_ring* buf_ring_ = nullptr;
  char* buffers_ = nullptr;
  int listener_ = -1;
  bool starved_ = false;
  size_t closing_ = 0;
  std::vector<Session*> sessions_;
};

}  // namespace

const char* runUringLoop(const LoopConfig& cfg) {
  UringRelay relay(cfg);
  return relay.run();
}

}  // namespace relay
