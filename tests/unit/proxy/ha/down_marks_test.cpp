// DownMarks: which servers' pools are marked down, edge by edge, from the
// monitor's picture (docs/availability.md, "A server that stops answering").
#include "proxy/ha/down_marks.hpp"

#include <gtest/gtest.h>

#include "proxy/ha/server_probe.hpp"

namespace sp::proxy {
namespace {

conf::HaConfig smallTimeouts() {
  conf::HaConfig ha;
  ha.check_interval_ms = 200;
  ha.probe_timeout_ms = 500;
  ha.failure_timeout_ms = 1000;
  return ha;
}

ServerHealth primaryAt(const std::string& address) {
  ServerHealth s;
  s.backend = "db0";
  s.name = "db0";
  s.address = address;
  s.primary = true;
  return s;
}

const ProbeRows kSingleServerRole = {{std::string("0"), std::string("0-1-5")}};

TEST(DownMarks, MarksOnceWhenProbesFailForFailureTimeoutAndUnmarksWhenItAnswers) {
  const auto ha = smallTimeouts();
  DownMarks marks;
  ServerHealth s = primaryAt("127.0.0.1:3307");
  applyProbe(s, kSingleServerRole, std::nullopt, ha, 1000);
  EXPECT_FALSE(marks.observe(s, ha)) << "up: nothing to send";
  // Hung from 1100: the first probe starts then and fails at 1600.
  applyProbeFailure(s, "no answer within ha.probe_timeout_ms (500 ms)", ha, 1600, 1100);
  EXPECT_FALSE(marks.observe(s, ha)) << "one failed probe is not an outage";
  applyProbeFailure(s, "login timed out after 500 ms", ha, 2300, 1100);
  auto down = marks.observe(s, ha);
  ASSERT_TRUE(down);
  EXPECT_EQ(down->address, "127.0.0.1:3307");
  EXPECT_NE(down->reason.find("ha.failure_timeout_ms (1000 ms)"), std::string::npos) << down->reason;
  EXPECT_NE(down->reason.find("login timed out"), std::string::npos) << down->reason;
  applyProbeFailure(s, "login timed out after 500 ms", ha, 3000, 1100);
  EXPECT_FALSE(marks.observe(s, ha)) << "marked once, not on every failed probe";
  ASSERT_EQ(marks.marked().size(), 1u);
  applyProbe(s, kSingleServerRole, std::nullopt, ha, 3500);
  auto up = marks.observe(s, ha);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->address, "127.0.0.1:3307");
  EXPECT_TRUE(up->reason.empty());
  EXPECT_TRUE(marks.marked().empty());
  EXPECT_FALSE(marks.observe(s, ha));
}

TEST(DownMarks, AServerThatRefusesWithItsOwnErrorIsAliveAndNeverMarked) {
  const auto ha = smallTimeouts();
  DownMarks marks;
  ServerHealth s = primaryAt("127.0.0.1:3307");
  applyProbe(s, kSingleServerRole, std::nullopt, ha, 1000);
  // 1040 Too many connections, for failure_timeout_ms and more.
  applyProbeFailure(s, "Too many connections", ha, 1500, 1500, true);
  applyProbeFailure(s, "Too many connections", ha, 3000, 1500, true);
  EXPECT_EQ(s.state, ServerState::kDown);
  EXPECT_FALSE(marks.observe(s, ha)) << "full, not hung: the pools' own connections decide";
}

TEST(DownMarks, AMarkedServerThatRefusesIsUnmarked) {
  const auto ha = smallTimeouts();
  DownMarks marks;
  ServerHealth s = primaryAt("127.0.0.1:3307");
  applyProbeFailure(s, "connect failed: Connection refused", ha, 1000, 1000);
  ASSERT_TRUE(marks.observe(s, ha)) << "never answered: down at once";
  applyProbeFailure(s, "Too many connections", ha, 1200, 1000, true);
  auto up = marks.observe(s, ha);
  ASSERT_TRUE(up);
  EXPECT_TRUE(up->reason.empty()) << "it answers, even if with an error";
}

TEST(DownMarks, ServersAreMarkedByAddressIndependently) {
  const auto ha = smallTimeouts();
  DownMarks marks;
  ServerHealth a = primaryAt("127.0.0.1:3307");
  ServerHealth b = primaryAt("127.0.0.1:3308");
  b.name = b.backend = "db1";
  applyProbeFailure(a, "timeout", ha, 1000, 1000);
  applyProbeFailure(b, "timeout", ha, 1000, 1000);
  ASSERT_TRUE(marks.observe(a, ha));
  ASSERT_TRUE(marks.observe(b, ha));
  EXPECT_EQ(marks.marked().size(), 2u);
  applyProbe(a, kSingleServerRole, std::nullopt, ha, 2000);
  ASSERT_TRUE(marks.observe(a, ha));
  ASSERT_EQ(marks.marked().size(), 1u);
  EXPECT_EQ(marks.marked().front().address, "127.0.0.1:3308");
}

}  // namespace
}  // namespace sp::proxy
