#include "proxy/fleet/fleet_limits.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

#include "coord/limit_records.hpp"
#include "proxy/core/statement_limit_table.hpp"

namespace sp::proxy {

namespace {

std::string utcNow() {
  const auto secs = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// A record as a rule; refused when its limits are out of SET LIMIT's bounds
// (a record written by hand, or by a newer proxy).
std::expected<conf::StatementLimitRule, std::string> ruleOf(const coord::LimitRecord& record) {
  if (record.max_per_second > conf::kMaxStatementRate || record.max_concurrent > conf::kMaxStatementConcurrency) {
    return std::unexpected(fmt::format("limits out of bounds (max_per_second 0 to {}, max_concurrent 0 to {})",
                                       conf::kMaxStatementRate, conf::kMaxStatementConcurrency));
  }
  conf::StatementLimitRule rule;
  (record.kind == "user" ? rule.user : rule.digest) = record.name;
  rule.max_per_second = record.max_per_second;
  rule.max_concurrent = record.max_concurrent;
  return rule;
}

}  // namespace

FleetLimits::FleetLimits(const conf::FleetConfig& config, StatementLimits* limits)
    : config_(config), limits_(limits), admin_client_(config_) {}

void FleetLimits::apply(const std::string& key, std::string_view value) {
  if (limits_ == nullptr) return;
  auto record = coord::decodeLimitRecord(value);
  auto rule = record ? ruleOf(*record) : std::unexpected(record.error());
  if (!rule) {
    spdlog::error("fleet {}: {}: {}; the statement limits in force stay", config_.name, key, rule.error());
    return;
  }
  if (auto set = limits_->set(*rule); !set) {
    spdlog::error("fleet {}: {}: {}", config_.name, key, set.error());
    return;
  }
  spdlog::info("fleet {}: statement limit for {} '{}': max_per_second {}, max_concurrent {} (set by {} at {})",
               config_.name, record->kind, record->name.substr(0, 200), record->max_per_second,
               record->max_concurrent, record->set_by, record->set_at);
}

awaitable<std::string> FleetLimits::read(EtcdClient& client) {
  auto answer = co_await client.call("/v3/kv/range", coord::etcdRangeRequest(coord::limitsPrefix(config_.etcd_prefix), true));
  if (!answer) co_return "read the statement limits: " + answer.error();
  auto range = coord::parseEtcdRange(*answer);
  if (!range) co_return "read the statement limits: " + range.error();
  for (const auto& kv : range->kvs) apply(kv.key, kv.value);
  co_return std::string();
}

void FleetLimits::onEvent(const coord::EtcdWatchEvent& event) {
  if (event.is_delete) {
    // Nothing deletes these records; one deleted by hand changes nothing in force.
    spdlog::warn("fleet {}: {} was deleted in etcd; the statement limits in force stay (SET LIMIT ... = 0 removes one)",
                 config_.name, event.kv.key);
    return;
  }
  apply(event.kv.key, event.kv.value);
}

std::expected<void, std::string> FleetLimits::publish(const conf::StatementLimitRule& given, const std::string& who) {
  const conf::StatementLimitRule rule = StatementLimits::normalized(given);
  coord::LimitRecord record;
  record.kind = rule.user.empty() ? "digest" : "user";
  record.name = rule.user.empty() ? rule.digest : rule.user;
  record.max_per_second = rule.max_per_second;
  record.max_concurrent = rule.max_concurrent;
  record.set_by = who + "@" + config_.name;
  record.set_at = utcNow();
  const std::string key = coord::limitKey(config_.etcd_prefix, record.kind, record.name);
  const std::string body = coord::etcdPutRequest(key, coord::encodeLimitRecord(record));
  auto answer = runEtcdCall<std::expected<std::string, std::string>>(
      [&](EtcdClient& c) { return c.call("/v3/kv/put", body); }, admin_client_);
  if (!answer) return std::unexpected("the coordination store (etcd) did not take it: " + answer.error());
  return {};
}

}  // namespace sp::proxy
