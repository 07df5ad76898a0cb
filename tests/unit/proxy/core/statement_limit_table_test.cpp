// Statement limits per user and per digest (proxy/core/statement_limit_table.hpp):
// rate buckets on a given clock, concurrency tickets, fleet shares, SET LIMIT.
#include <gtest/gtest.h>

#include "proxy/core/statement_limit_table.hpp"

namespace sp::proxy {
namespace {

using Clock = StatementLimits::Clock;
using namespace std::chrono_literals;

bool admitted(const std::variant<StatementLimits::Ticket, StatementLimits::Refusal>& v) {
  return std::holds_alternative<StatementLimits::Ticket>(v);
}

TEST(StatementLimits, NoRulesAdmitsEverything) {
  StatementLimits limits({});
  EXPECT_TRUE(limits.empty());
  EXPECT_TRUE(admitted(limits.admit("app", "", Clock::now())));
}

TEST(StatementLimits, RateIsOneSecondsWorthThenItsRefill) {
  StatementLimits limits({{"app", "", 10, 0}});
  const auto t0 = Clock::now();
  int ok = 0;
  for (int i = 0; i < 15; ++i) ok += admitted(limits.admit("app", "", t0)) ? 1 : 0;
  EXPECT_EQ(ok, 10);  // the bucket holds one second's worth
  auto refused = limits.admit("app", "", t0);
  ASSERT_TRUE(std::holds_alternative<StatementLimits::Refusal>(refused));
  EXPECT_TRUE(std::get<StatementLimits::Refusal>(refused).rate);
  EXPECT_EQ(std::get<StatementLimits::Refusal>(refused).message,
            "shardproxy: user 'app' is over its statement rate (statement_limits max_per_second 10); retry later");
  EXPECT_FALSE(admitted(limits.admit("app", "", t0 + 50ms)));  // half a token
  EXPECT_TRUE(admitted(limits.admit("app", "", t0 + 100ms)));   // one token refilled
  EXPECT_TRUE(admitted(limits.admit("other", "", t0)));         // another user is not limited
  auto rows = limits.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].admitted, 11u);
  EXPECT_EQ(rows[0].refused_rate, 7u);
}

TEST(StatementLimits, AClockReadBeforeTheLastRefillCreditsNothingTwice) {
  // Two workers read their clocks, then take the bucket's lock in the other
  // order: the later `now` first. The interval between the two must not be
  // credited again when the next statement comes.
  StatementLimits limits({{"app", "", 10, 0}});
  const auto t0 = Clock::now();
  int ok = 0;
  for (int i = 0; i < 10; ++i) ok += admitted(limits.admit("app", "", t0)) ? 1 : 0;
  EXPECT_EQ(ok, 10);
  EXPECT_TRUE(admitted(limits.admit("app", "", t0 + 1000ms)));  // 10 tokens back, 9 left
  for (int i = 0; i < 9; ++i) EXPECT_TRUE(admitted(limits.admit("app", "", t0 + 100ms))) << i;  // an old clock
  EXPECT_FALSE(admitted(limits.admit("app", "", t0 + 100ms)));
  // 1,050 ms: half a token since the last refill (1,000 ms), not 9.5 since 100 ms.
  EXPECT_FALSE(admitted(limits.admit("app", "", t0 + 1050ms)));
}

TEST(StatementLimits, ConcurrencyCountsTicketsUntilTheyEnd) {
  StatementLimits limits({{"app", "", 0, 2}});
  const auto now = Clock::now();
  auto a = limits.admit("app", "", now);
  auto b = limits.admit("app", "", now);
  ASSERT_TRUE(admitted(a) && admitted(b));
  auto c = limits.admit("app", "", now);
  ASSERT_FALSE(admitted(c));
  EXPECT_FALSE(std::get<StatementLimits::Refusal>(c).rate);
  EXPECT_EQ(limits.rows()[0].in_flight, 2u);
  a = limits.admit("nobody", "", now);  // the first ticket ends
  EXPECT_EQ(limits.rows()[0].in_flight, 1u);
  EXPECT_TRUE(admitted(limits.admit("app", "", now)));  // a temporary: admitted, then released
  EXPECT_EQ(limits.rows()[0].in_flight, 1u);
}

TEST(StatementLimits, DigestRulesMatchTheNormalizedStatement) {
  StatementLimits limits({{"", "SELECT * FROM msg WHERE conv_id = 7", 0, 1}});
  EXPECT_TRUE(limits.hasDigestRules());
  const std::string digest = limits.rows()[0].name;
  EXPECT_EQ(digest, "SELECT * FROM msg WHERE conv_id = ?");
  const auto now = Clock::now();
  auto held = limits.admit("app", digest, now);
  ASSERT_TRUE(admitted(held));
  auto refused = limits.admit("reporting", digest, now);  // any user
  ASSERT_FALSE(admitted(refused));
  EXPECT_NE(std::get<StatementLimits::Refusal>(refused).message.find("digest 'SELECT * FROM msg WHERE conv_id = ?'"),
            std::string::npos);
  EXPECT_TRUE(admitted(limits.admit("app", "SELECT 1", now)));
}

TEST(StatementLimits, ARefusedRateGivesBackWhatItTook) {
  // The user's rule admits, the digest's refuses: the user's token and slot are returned.
  StatementLimits limits({{"app", "", 100, 1}, {"", "SELECT ?", 1, 0}});
  const auto now = Clock::now();
  const std::string digest = "SELECT ?";
  ASSERT_TRUE(admitted(limits.admit("app", digest, now)));
  ASSERT_FALSE(admitted(limits.admit("app", digest, now)));
  for (const auto& r : limits.rows()) {
    EXPECT_EQ(r.in_flight, 0u) << r.name;
    if (r.kind == "user") EXPECT_EQ(r.admitted, 1u);
  }
  int ok = 0;
  for (int i = 0; i < 100; ++i) ok += admitted(limits.admit("app", "", now)) ? 1 : 0;
  EXPECT_EQ(ok, 99);  // 100 a second, one spent: the refused statement's token came back
}

TEST(StatementLimits, AFleetSharesTheLimit) {
  StatementLimits limits({{"app", "", 90, 10}});
  limits.setFleetProxies(3);
  const auto t0 = Clock::now();
  int ok = 0;
  for (int i = 0; i < 100; ++i) ok += admitted(limits.admit("app", "", t0)) ? 1 : 0;
  EXPECT_EQ(ok, 30);
  auto refused = limits.admit("app", "", t0);
  EXPECT_NE(std::get<StatementLimits::Refusal>(refused).message.find("this proxy's share 30 of a fleet of 3"),
            std::string::npos);
  auto row = limits.rows()[0];
  EXPECT_EQ(row.share_per_second, 30u);
  EXPECT_EQ(row.share_concurrent, 3u);
  limits.setFleetProxies(0);  // never below one proxy
  EXPECT_EQ(limits.fleetProxies(), 1u);
}

TEST(StatementLimits, SetAddsReplacesAndRemoves) {
  StatementLimits limits({});
  limits.set({"app", "", 5, 0});
  EXPECT_FALSE(limits.empty());
  EXPECT_EQ(limits.rows()[0].max_per_second, 5u);
  limits.set({"app", "", 0, 3});
  ASSERT_EQ(limits.rows().size(), 1u);
  EXPECT_EQ(limits.rows()[0].max_per_second, 0u);
  EXPECT_EQ(limits.rows()[0].max_concurrent, 3u);
  limits.set({"app", "", 0, 0});
  EXPECT_TRUE(limits.empty());
  EXPECT_TRUE(limits.set({"app", "", 0, 0}));  // removing what is not there: nothing to do
}

TEST(StatementLimits, TheSameLimitsAgainKeepTheCounters) {
  // A fleet's watch brings back the rule SET LIMIT just applied here.
  StatementLimits limits({});
  ASSERT_TRUE(limits.set({"app", "", 0, 1}));
  const auto now = StatementLimits::Clock::now();
  auto held = limits.admit("app", "", now);
  ASSERT_TRUE(std::holds_alternative<StatementLimits::Ticket>(held));
  ASSERT_TRUE(limits.set({"app", "", 0, 1}));
  EXPECT_EQ(limits.rows()[0].in_flight, 1u);
  EXPECT_TRUE(std::holds_alternative<StatementLimits::Refusal>(limits.admit("app", "", now)));
  // Other limits: a new rule, its own counters.
  ASSERT_TRUE(limits.set({"app", "", 0, 2}));
  EXPECT_EQ(limits.rows()[0].in_flight, 0u);
}

TEST(StatementLimits, AtMostTheRuleBoundAndDigestsKeptNormalized) {
  StatementLimits limits({});
  for (size_t i = 0; i < conf::kMaxStatementLimitRules; ++i) {
    ASSERT_TRUE(limits.set({"u" + std::to_string(i), "", 1, 0}));
  }
  auto refused = limits.set({"one_more", "", 1, 0});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "at most 1000 statement limits (remove one first)");
  EXPECT_TRUE(limits.set({"u0", "", 2, 0}));  // replacing one is not adding
  EXPECT_TRUE(limits.set({"u0", "", 0, 0}));
  EXPECT_TRUE(limits.set({"one_more", "", 1, 0}));
  EXPECT_EQ(StatementLimits::normalized({"", "SELECT * FROM msg WHERE conv_id = 42", 1, 0}).digest,
            StatementLimits::normalized({"", "SELECT * FROM msg WHERE conv_id = 7", 1, 0}).digest);
}

}  // namespace
}  // namespace sp::proxy
