// BackendPool::markDown against a hung server: a listener that accepts TCP
// connections (the kernel does, even for a stopped process) and never sends
// a handshake. Acquirers stuck connecting, and those waiting for a free
// connection, must fail at once with the reason; later ones without trying.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "proxy/backend/backend_pool.hpp"

namespace sp::proxy {
namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  std::optional<BackendError> error;
  bool lent = false;
  Clock::duration took{};
};

awaitable<void> acquireInto(BackendPool& pool, Outcome& out) {
  const auto start = Clock::now();
  auto r = co_await pool.acquire(0, 1);
  out.took = Clock::now() - start;
  if (r) out.lent = true;
  else out.error = r.error();
}

awaitable<void> markDownAfter(BackendPool& pool, std::chrono::milliseconds delay) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(delay);
  co_await t.async_wait(kNoThrow);
  pool.markDown("no answer for ha.failure_timeout_ms (1000 ms): test");
}

TEST(BackendPoolDown, MarkDownEndsAHungConnectAndTheWaitersAndRefusesNewAcquirers) {
  asio::io_context io;
  tcp::acceptor hung(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));  // listens, never answers
  conf::BackendConfig config;
  config.name = "db0";
  config.address = {"127.0.0.1", hung.local_endpoint().port()};
  config.user = "app";
  config.connect_timeout_ms = 20000;  // far beyond the test: only markDown can end the connect
  BackendPool pool(io.get_executor(), config, 1, 0, 1 << 20);
  Outcome connecting, waiting;
  asio::co_spawn(io, acquireInto(pool, connecting), asio::detached);
  asio::co_spawn(io, acquireInto(pool, waiting), asio::detached);  // pool max 1: waits for the first
  asio::co_spawn(io, markDownAfter(pool, std::chrono::milliseconds(100)), asio::detached);
  io.run_for(std::chrono::seconds(5));
  for (const Outcome* o : {&connecting, &waiting}) {
    ASSERT_TRUE(o->error) << "still waiting after 5 s";
    EXPECT_FALSE(o->lent);
    EXPECT_EQ(o->error->kind, BackendError::Kind::kDown);
    EXPECT_NE(o->error->message.find("health probes"), std::string::npos) << o->error->message;
    EXPECT_NE(o->error->message.find("test"), std::string::npos) << o->error->message;
    EXPECT_LT(o->took, std::chrono::seconds(1));
  }
  EXPECT_EQ(pool.stats().total, 0u) << "the abandoned connect is not counted";
  EXPECT_TRUE(pool.stats().down);

  Outcome later;
  io.restart();
  asio::co_spawn(io, acquireInto(pool, later), asio::detached);
  io.run_for(std::chrono::seconds(1));
  ASSERT_TRUE(later.error);
  EXPECT_EQ(later.error->kind, BackendError::Kind::kDown);
  EXPECT_LT(later.took, std::chrono::milliseconds(50)) << "refused without trying";

  pool.markUp();
  EXPECT_TRUE(pool.probeDown().empty());
  EXPECT_FALSE(pool.stats().down);
  EXPECT_EQ(pool.stats().down_transitions, 1u);
  EXPECT_EQ(pool.stats().up_transitions, 1u);
}

TEST(BackendPoolDown, ARepointToAnotherServerClearsTheMark) {
  asio::io_context io;
  conf::BackendConfig config;
  config.name = "db0";
  config.address = {"127.0.0.1", 1};
  BackendPool pool(io.get_executor(), config, 4, 0, 1 << 20);
  pool.markDown("test");
  ASSERT_FALSE(pool.probeDown().empty());
  conf::BackendConfig replica = config;
  replica.address.port = 2;
  pool.repoint(replica, true);
  EXPECT_TRUE(pool.probeDown().empty()) << "the failover's new primary owes nothing to the old one's probes";
}

}  // namespace
}  // namespace sp::proxy
