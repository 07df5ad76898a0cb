// Background work yields to the foreground (proxy/core/background_gate.hpp,
// background_signals.hpp): the thresholds over measured windows, and the
// gate's waits (bounded by background.max_pause_ms) on a real io_context.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "proxy/core/background_gate.hpp"
#include "proxy/core/background_signals.hpp"

namespace sp::proxy {
namespace {

constexpr std::array<double, 4> kBounds = {0.001, 0.01, 0.1, 1};

TEST(BackgroundSignals, QuantileIsTheUpperBoundOfItsBucket) {
  const std::array<uint64_t, 5> counts = {90, 8, 1, 1, 0};  // 100 statements
  EXPECT_DOUBLE_EQ(quantileUpperBound(kBounds, counts, 0.5), 0.001);
  EXPECT_DOUBLE_EQ(quantileUpperBound(kBounds, counts, 0.98), 0.01);
  EXPECT_DOUBLE_EQ(quantileUpperBound(kBounds, counts, 0.99), 0.1);
  EXPECT_DOUBLE_EQ(quantileUpperBound(kBounds, counts, 1.0), 1);
  const std::array<uint64_t, 5> slow = {0, 0, 0, 0, 3};
  EXPECT_TRUE(std::isinf(quantileUpperBound(kBounds, slow, 0.99)));
  const std::array<uint64_t, 5> none = {0, 0, 0, 0, 0};
  EXPECT_EQ(quantileUpperBound(kBounds, none, 0.99), 0);
}

TEST(BackgroundSignals, LatencyCountsOnlyWhenOnAndOverEnoughStatements) {
  conf::BackgroundConfig limits;
  limits.max_foreground_p99_ms = 50;
  limits.min_statements = 20;
  std::vector<BackendSignal> signals = {{"db0", 100, 0.1, std::nullopt, ""},   // slow: waits
                                        {"db1", 100, 0.025, std::nullopt, ""},  // fast enough
                                        {"db2", 19, 1.0, std::nullopt, ""}};    // too few to judge
  auto reasons = overloadReasons(limits, signals);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons["db0"],
            "clients' p99 on db0 is up to 100 ms over 100 statements (background.max_foreground_p99_ms = 50)");
  limits.max_foreground_p99_ms = 0;  // off
  EXPECT_TRUE(overloadReasons(limits, signals).empty());
}

TEST(BackgroundSignals, ReplicaLagBeyondTheLimitWaits) {
  conf::BackgroundConfig limits;  // max_replica_lag_s 10
  std::vector<BackendSignal> signals = {{"db0", 0, 0, 11, "db0r2"}, {"db1", 0, 0, 10, "db1r1"}, {"db2", 0, 0, {}, ""}};
  auto reasons = overloadReasons(limits, signals);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons["db0"], "replica db0r2 of db0 is 11 s behind (background.max_replica_lag_s = 10)");
  limits.max_foreground_p99_ms = 1;
  limits.min_statements = 1;
  signals[0].statements = 5;
  signals[0].p99_seconds = 0.01;
  EXPECT_EQ(overloadReasons(limits, signals)["db0"],
            "clients' p99 on db0 is up to 10 ms over 5 statements (background.max_foreground_p99_ms = 1); "
            "replica db0r2 of db0 is 11 s behind (background.max_replica_lag_s = 10)");
}

// Runs `gate.yield` to its end on a fresh io_context; `during` runs on the
// same context after `after_ms` (to lift the overload meanwhile).
std::chrono::milliseconds yieldOnce(BackgroundGate& gate, std::vector<std::string>& notes, std::function<void()> during,
                                    int after_ms) {
  asio::io_context io;
  std::chrono::milliseconds waited{-1};
  asio::co_spawn(io, [&]() -> awaitable<void> {
    waited = co_await gate.yield("db0", "move 3", [&](const std::string& why) { notes.push_back(why); });
  }, asio::detached);
  asio::steady_timer lift(io, std::chrono::milliseconds(after_ms));
  lift.async_wait([&](const boost::system::error_code&) {
    if (during) during();
  });
  io.run();
  return waited;
}

TEST(BackgroundGate, NoOverloadNoWait) {
  BackgroundGate gate(conf::BackgroundConfig{});
  std::vector<std::string> notes;
  EXPECT_EQ(yieldOnce(gate, notes, nullptr, 0).count(), 0);
  EXPECT_TRUE(notes.empty());
  EXPECT_TRUE(gate.figures().empty());
}

TEST(BackgroundGate, WaitsUntilTheOverloadIsLifted) {
  conf::BackgroundConfig settings;
  settings.check_ms = 50;
  BackgroundGate gate(settings);
  gate.publish({{"db0", "busy"}, {"db1", "also busy"}});
  std::vector<std::string> notes;
  auto waited = yieldOnce(gate, notes, [&] { gate.publish({}); }, 200);
  EXPECT_GE(waited.count(), 150);
  EXPECT_EQ(notes, std::vector<std::string>{"busy"});
  auto figures = gate.figures();
  ASSERT_EQ(figures.size(), 1u);  // only db0 waited; db1 is no longer overloaded
  EXPECT_EQ(figures[0].backend, "db0");
  EXPECT_EQ(figures[0].pauses, 1u);
  EXPECT_EQ(figures[0].forced, 0u);
  EXPECT_EQ(figures[0].last_paused, "move 3");
  EXPECT_EQ(figures[0].reason, "");
}

TEST(BackgroundGate, ALastingOverloadLetsOneStepRunAfterTheLongestPause) {
  conf::BackgroundConfig settings;
  settings.check_ms = 20;
  settings.max_pause_ms = 100;
  BackgroundGate gate(settings);
  gate.publish({{"db0", "busy"}});
  std::vector<std::string> notes;
  auto waited = yieldOnce(gate, notes, nullptr, 0);
  EXPECT_GE(waited.count(), 100);
  auto figures = gate.figures();
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0].forced, 1u);
  EXPECT_EQ(figures[0].reason, "busy");  // still overloaded
  // SET BACKGROUND changes what the next wait takes.
  settings.max_pause_ms = 30;
  gate.configure(settings);
  EXPECT_EQ(gate.settings().max_pause_ms, 30u);
}

}  // namespace
}  // namespace sp::proxy
