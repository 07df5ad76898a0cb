// relay_floor: a zero-logic byte relay on loopback, to measure what moving a
// query and its answer through a process costs on this machine with epoll
// (as Asio does it, and without its speculative reads) and with io_uring.
//   relay_floor --listen PORT --backend PORT --mode epoll-spec|epoll|uring
//               [--threads N] [--time SECONDS] [--buffer BYTES] [--uring-plain-recv]
// Runs until SIGINT/SIGTERM or --time; exits 1 when it cannot start.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "relay.hpp"

namespace relay {
std::atomic<bool> g_stop{false};
}

namespace {

struct Args {
  relay::LoopConfig loop;
  unsigned threads = 1;
  unsigned seconds = 0;  // 0: until a signal
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "relay_floor: %s\nusage: relay_floor --listen PORT --backend PORT --mode epoll-spec|epoll|uring "
               "[--threads N] [--time SECONDS] [--buffer BYTES] [--uring-plain-recv]\n",
               why);
  std::exit(2);
}

unsigned long number(const char* text, unsigned long max) {
  char* end = nullptr;
  unsigned long v = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || v == 0 || v > max) usage("bad number");
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  std::string mode;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--uring-plain-recv") {
      a.loop.uring_plain_recv = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value");
    const char* v = argv[++i];
    if (k == "--listen") a.loop.listen_port = static_cast<uint16_t>(number(v, 65535));
    else if (k == "--backend") a.loop.backend_port = static_cast<uint16_t>(number(v, 65535));
    else if (k == "--mode") mode = v;
    else if (k == "--threads") a.threads = static_cast<unsigned>(number(v, 64));
    else if (k == "--time") a.seconds = static_cast<unsigned>(number(v, 86400));
    else if (k == "--buffer") a.loop.direction_bytes = number(v, 64UL << 20);
    else usage("unknown option");
  }
  if (a.loop.listen_port == 0 || a.loop.backend_port == 0) usage("--listen and --backend are required");
  if (mode == "epoll-spec") a.loop.mode = relay::Mode::EpollSpeculative;
  else if (mode == "epoll") a.loop.mode = relay::Mode::Epoll;
  else if (mode == "uring") a.loop.mode = relay::Mode::Uring;
  else usage("--mode is epoll-spec, epoll or uring");
  return a;
}

void onSignal(int) { relay::g_stop.store(true); }

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  struct sigaction sa{};
  sa.sa_handler = onSignal;  // no SA_RESTART: a blocked wait returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::atomic<int> failed{0};
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < args.threads; ++i)
    workers.emplace_back([&] {
      const char* err = args.loop.mode == relay::Mode::Uring ? relay::runUringLoop(args.loop)
                                                             : relay::runEpollLoop(args.loop);
      if (*err) {
        std::fprintf(stderr, "relay_floor: %s: %s\n", err, std::strerror(errno));
        failed = 1;
        relay::g_stop = true;
      }
    });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(args.seconds);
  while (!relay::g_stop) {
    if (args.seconds && std::chrono::steady_clock::now() >= deadline) relay::g_stop = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& w : workers) w.join();
  return failed ? 1 : 0;
}
