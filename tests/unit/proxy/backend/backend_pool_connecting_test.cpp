// backends[].max_connecting: a pool has at most its share of connects in
// flight. Against a listener that accepts TCP connections and never sends a
// handshake, eight acquirers at an empty pool of eight with max_connecting 3
// start exactly three connects; the others wait (and fail with the three
// when the pool is marked down).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "proxy/backend/backend_pool.hpp"

namespace sp::proxy {
namespace {

struct ConnectOutcome {
  std::optional<BackendError> error;
  bool lent = false;
};

awaitable<void> acquireOrFail(BackendPool& pool, ConnectOutcome& out) {
  auto r = co_await pool.acquire(0, 1);
  if (r) out.lent = true;
  else out.error = r.error();
}

awaitable<void> acceptForever(tcp::acceptor& acceptor, std::vector<tcp::socket>& accepted) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) co_return;
    accepted.push_back(std::move(socket));  // held open, never answered
  }
}

// A backend at `port` whose connects outlast the test.
conf::BackendConfig silentBackend(uint16_t port, uint32_t max_connections, uint32_t max_connecting) {
  conf::BackendConfig config;
  config.name = "db0";
  config.address = {"127.0.0.1", port};
  config.user = "app";
  config.connect_timeout_ms = 20000;
  config.max_connections = max_connections;
  config.max_connecting = max_connecting;
  return config;
}

TEST(BackendPoolConnecting, ConnectsInFlightStayWithinMaxConnecting) {
  asio::io_context io;
  tcp::acceptor hung(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::vector<tcp::socket> accepted;
  asio::co_spawn(io, acceptForever(hung, accepted), asio::detached);
  BackendPool pool(io.get_executor(), silentBackend(hung.local_endpoint().port(), 8, 3), 8, 0, 1 << 20);
  std::vector<ConnectOutcome> outcomes(8);
  for (auto& o : outcomes) asio::co_spawn(io, acquireOrFail(pool, o), asio::detached);
  io.run_for(std::chrono::milliseconds(300));
  EXPECT_EQ(accepted.size(), 3u) << "connects in flight";
  EXPECT_EQ(pool.stats().total, 3u);
  EXPECT_EQ(pool.stats().waiting, 5u);

  pool.markDown("test");
  io.run_for(std::chrono::milliseconds(300));
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.error) << "still waiting";
    EXPECT_EQ(o.error->kind, BackendError::Kind::kDown);
  }
  EXPECT_EQ(accepted.size(), 3u) << "no connect started after the mark";
  hung.close();
}

TEST(BackendPoolConnecting, EachWorkersPoolGetsItsShareAndAtLeastOne) {
  asio::io_context io;
  tcp::acceptor hung(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::vector<tcp::socket> accepted;
  asio::co_spawn(io, acceptForever(hung, accepted), asio::detached);
  // max_connecting 2 over 4 workers (16 connections each): under 1, so 1.
  BackendPool pool(io.get_executor(), silentBackend(hung.local_endpoint().port(), 64, 2), 16, 0, 1 << 20);
  std::vector<ConnectOutcome> outcomes(4);
  for (auto& o : outcomes) asio::co_spawn(io, acquireOrFail(pool, o), asio::detached);
  io.run_for(std::chrono::milliseconds(300));
  EXPECT_EQ(accepted.size(), 1u);
  pool.markDown("test");
  io.run_for(std::chrono::milliseconds(300));
  hung.close();
}

}  // namespace
}  // namespace sp::proxy

namespace sp::proxy {
namespace {

awaitable<void> closeEachAccepted(tcp::acceptor& acceptor, int& accepted) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) co_return;
    ++accepted;  // the socket closes here: the login fails at once
  }
}

TEST(BackendPoolConnecting, AFailedConnectFailsTheStatementsWaitingForASlotAtOnce) {
  asio::io_context io;
  tcp::acceptor closing(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  int accepted = 0;
  asio::co_spawn(io, closeEachAccepted(closing, accepted), asio::detached);
  BackendPool pool(io.get_executor(), silentBackend(closing.local_endpoint().port(), 8, 1), 8, 0, 1 << 20);
  std::vector<ConnectOutcome> outcomes(6);
  for (auto& o : outcomes) asio::co_spawn(io, acquireOrFail(pool, o), asio::detached);
  const auto start = std::chrono::steady_clock::now();
  while (std::any_of(outcomes.begin(), outcomes.end(), [](const ConnectOutcome& o) { return !o.error && !o.lent; }) &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(15)) {
    io.run_for(std::chrono::milliseconds(20));
  }
  const auto took = std::chrono::steady_clock::now() - start;
  for (const auto& o : outcomes) {
    ASSERT_TRUE(o.error) << "still waiting";
    EXPECT_FALSE(o.lent);
  }
  EXPECT_LT(took, std::chrono::seconds(2)) << "the waiters failed at their deadline, not with the connect";
  EXPECT_EQ(accepted, 1) << "one connect failed; the backoff answered the others";
  closing.close();
}

}  // namespace
}  // namespace sp::proxy
