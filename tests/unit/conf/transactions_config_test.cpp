// The `transactions` section: cross_backend, recovery_interval_ms,
// xid_prefix and decision_log, each with its default, and a bad value
// refused with its path and line.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;
using fixture::minimalWith;

TEST(TransactionsConfig, DefaultsWhenAbsent) {
  auto config = parseConfig(minimalWith(""), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const TransactionsConfig& t = config->transactions;
  EXPECT_EQ(t.cross_backend, CrossBackend::kAtomic);
  EXPECT_EQ(t.recovery_interval_ms, 2000u);
  EXPECT_EQ(t.xid_prefix, "sp");
  EXPECT_EQ(t.decision_log, "");
}

TEST(TransactionsConfig, ParsesEveryKey) {
  auto config = parseConfig(minimalWith("transactions:\n  cross_backend: atomic\n  recovery_interval_ms: 500\n"
                                        "  xid_prefix: proxy_a1\n  decision_log: xa/decisions.sqlite\n"),
                            kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  const TransactionsConfig& t = config->transactions;
  EXPECT_EQ(t.cross_backend, CrossBackend::kAtomic);
  EXPECT_EQ(t.recovery_interval_ms, 500u);
  EXPECT_EQ(t.xid_prefix, "proxy_a1");
  EXPECT_EQ(t.decision_log, "/etc/shardproxy/xa/decisions.sqlite");
}

TEST(TransactionsConfig, RefuseIsAccepted) {
  auto config = parseConfig(minimalWith("transactions:\n  cross_backend: refuse\n"), kBase);
  ASSERT_TRUE(config) << formatIssues(config.error(), "t.yaml");
  EXPECT_EQ(config->transactions.cross_backend, CrossBackend::kRefuse);
}

TEST(TransactionsConfig, AFleetNameAndPrefixTooLongForMariaDbIdsAreRefused) {
  const std::string fleet = "fleet:\n  name: " + std::string(39, 'p') +
                            "\n  etcd:\n    endpoints: [\"http://127.0.0.1:2379\"]\n    prefix: /sp/t\n";
  auto config = parseConfig(minimalWith("cache: /tmp/c.sqlite\n" + fleet + "transactions:\n  xid_prefix: ab\n"), kBase);
  ASSERT_FALSE(config);
  EXPECT_NE(formatIssues(config.error(), "t.yaml").find("64 bytes"), std::string::npos);
  // refuse: no global ids, no limit.
  auto refuse = parseConfig(
      minimalWith("cache: /tmp/c.sqlite\n" + fleet + "transactions:\n  xid_prefix: ab\n  cross_backend: refuse\n"),
      kBase);
  EXPECT_TRUE(refuse) << formatIssues(refuse.error(), "t.yaml");
}

TEST(TransactionsConfig, BadValueOrUnknownKeyIsRefusedWithItsPathAndLine) {
  for (auto [bad, path] : {std::pair{"  cross_backend: maybe\n", "transactions.cross_backend"},
                           {"  recovery_interval_ms: 10\n", "transactions.recovery_interval_ms"},
                           {"  recovery_interval_ms: 4000000\n", "transactions.recovery_interval_ms"},
                           {"  xid_prefix: \"a-b\"\n", "transactions.xid_prefix"},
                           {"  xid_prefix: \"\"\n", "transactions.xid_prefix"},
                           {"  xid_prefix: abcdefghijklmnopqrstuvwxyz\n", "transactions.xid_prefix"},
                           {"  two_phase: true\n", "two_phase"}}) {
    fixture::expectRefusedAtLine6("transactions", bad, path);
  }
}

}  // namespace
}  // namespace sp::conf
