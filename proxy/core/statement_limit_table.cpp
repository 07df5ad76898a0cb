#include "proxy/core/statement_limit_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "routing/plan_cache.hpp"

namespace sp::proxy {

struct StatementLimits::Entry {
  explicit Entry(conf::StatementLimitRule r) : rule(std::move(r)) {}
  const conf::StatementLimitRule rule;
  std::atomic<uint32_t> in_flight{0};
  std::atomic<uint64_t> admitted{0}, refused_rate{0}, refused_concurrency{0};
  std::mutex bucket_mutex;  // tokens, refilled
  double tokens = -1;       // -1: full at first use
  Clock::time_point refilled{};

  std::string name() const { return rule.user.empty() ? "digest '" + rule.digest.substr(0, 200) + "'" : "user '" + rule.user + "'"; }
};

struct StatementLimits::Table {
  std::unordered_map<std::string, std::shared_ptr<Entry>> by_user, by_digest;
};

namespace {

std::string normalizedDigest(const std::string& digest) { return routing::normalizeQuery(digest, {}).text; }

// This proxy's share of a fleet-wide limit: never above limit / proxies, at least 1.
uint32_t concurrencyShare(uint32_t limit, uint32_t proxies) { return std::max<uint32_t>(1, limit / proxies); }
double rateShare(uint32_t limit, uint32_t proxies) { return std::max(1.0, static_cast<double>(limit) / proxies); }

std::string fleetNote(uint32_t share, uint32_t proxies) {
  return proxies <= 1 ? std::string() : fmt::format(" (this proxy's share {} of a fleet of {})", share, proxies);
}

}  // namespace

StatementLimits::Ticket& StatementLimits::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    for (auto& e : held_) e->in_flight.fetch_sub(1, std::memory_order_relaxed);
    held_ = std::move(other.held_);
    other.held_.clear();
  }
  return *this;
}

StatementLimits::Ticket::~Ticket() {
  for (auto& e : held_) e->in_flight.fetch_sub(1, std::memory_order_relaxed);
}

StatementLimits::StatementLimits(const std::vector<conf::StatementLimitRule>& rules) {
  auto table = std::make_shared<Table>();
  for (auto rule : rules) {
    if (!rule.digest.empty()) rule.digest = normalizedDigest(rule.digest);
    auto& slot = rule.user.empty() ? table->by_digest[rule.digest] : table->by_user[rule.user];
    slot = std::make_shared<Entry>(std::move(rule));
  }
  publish(std::move(table));
}

StatementLimits::~StatementLimits() = default;

std::shared_ptr<const StatementLimits::Table> StatementLimits::table() const {
  std::lock_guard lock(mutex_);
  return table_;
}

void StatementLimits::publish(std::shared_ptr<const Table> table) {
  empty_.store(table->by_user.empty() && table->by_digest.empty(), std::memory_order_relaxed);
  has_digest_rules_.store(!table->by_digest.empty(), std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  table_ = std::move(table);
}

conf::StatementLimitRule StatementLimits::normalized(conf::StatementLimitRule rule) {
  if (!rule.digest.empty()) rule.digest = normalizedDigest(rule.digest);
  return rule;
}

std::expected<void, std::string> StatementLimits::set(const conf::StatementLimitRule& given) {
  const conf::StatementLimitRule rule = normalized(given);
  // One change at a time (the admin port and the fleet agent's thread): each
  // copies the table it replaces.
  std::lock_guard change(set_mutex_);
  auto current = table();
  const auto& map = rule.user.empty() ? current->by_digest : current->by_user;
  const std::string& key = rule.user.empty() ? rule.digest : rule.user;
  const bool remove = rule.max_per_second == 0 && rule.max_concurrent == 0;
  auto it = map.find(key);
  if (it == map.end() && remove) return {};
  // The same limits again (the fleet's echo of a SET LIMIT made here): the counters stay.
  if (it != map.end() && !remove && it->second->rule.max_per_second == rule.max_per_second &&
      it->second->rule.max_concurrent == rule.max_concurrent) {
    return {};
  }
  if (it == map.end() && current->by_user.size() + current->by_digest.size() >= conf::kMaxStatementLimitRules) {
    return std::unexpected(fmt::format("at most {} statement limits (remove one first)", conf::kMaxStatementLimitRules));
  }
  auto next = std::make_shared<Table>(*current);
  auto& next_map = rule.user.empty() ? next->by_digest : next->by_user;
  if (remove) {
    next_map.erase(key);
  } else {
    // A new entry: statements running under the old one release its counter, not this one's.
    next_map[key] = std::make_shared<Entry>(rule);
  }
  publish(std::move(next));
  return {};
}

void StatementLimits::setFleetProxies(uint32_t proxies) { proxies_.store(std::max<uint32_t>(1, proxies)); }

std::variant<StatementLimits::Ticket, StatementLimits::Refusal> StatementLimits::admit(std::string_view user,
                                                                                       std::string_view digest,
                                                                                       Clock::time_point now) {
  Ticket ticket;
  if (empty()) return ticket;
  auto t = table();
  std::shared_ptr<Entry> entries[2];
  if (auto it = t->by_user.find(std::string(user)); it != t->by_user.end()) entries[0] = it->second;
  if (!digest.empty()) {
    if (auto it = t->by_digest.find(std::string(digest)); it != t->by_digest.end()) entries[1] = it->second;
  }
  const uint32_t proxies = fleetProxies();
  // Concurrency first (undone by the ticket), then the rates (refunded on a refusal).
  for (auto& e : entries) {
    if (!e || e->rule.max_concurrent == 0) continue;
    const uint32_t share = concurrencyShare(e->rule.max_concurrent, proxies);
    if (e->in_flight.fetch_add(1, std::memory_order_relaxed) >= share) {
      e->in_flight.fetch_sub(1, std::memory_order_relaxed);
      e->refused_concurrency.fetch_add(1, std::memory_order_relaxed);
      return Refusal{false, fmt::format("shardproxy: {} has {} statements running, its limit (statement_limits "
                                        "max_concurrent {}{}); retry when one ends",
                                        e->name(), share, e->rule.max_concurrent, fleetNote(share, proxies))};
    }
    ticket.held_.push_back(e);
  }
  std::vector<Entry*> charged;
  for (auto& e : entries) {
    if (!e || e->rule.max_per_second == 0) continue;
    const double rate = rateShare(e->rule.max_per_second, proxies);
    std::lock_guard lock(e->bucket_mutex);
    if (e->tokens < 0) {
      e->tokens = rate;
      e->refilled = now;
    } else if (now > e->refilled) {
      // Workers read their clocks before this lock: a `now` older than the
      // last refill (a thread preempted in between) credits nothing, and the
      // refill time never goes back, else the same interval is credited
      // twice (under load, 249 statements admitted of an allowance of 200).
      e->tokens = std::min(rate, e->tokens + rate * std::chrono::duration<double>(now - e->refilled).count());
      e->refilled = now;
    }
    if (e->tokens < 1) {
      e->refused_rate.fetch_add(1, std::memory_order_relaxed);
      for (Entry* c : charged) {
        std::lock_guard refund(c->bucket_mutex);
        c->tokens += 1;
      }
      return Refusal{true, fmt::format("shardproxy: {} is over its statement rate (statement_limits max_per_second "
                                       "{}{}); retry later",
                                       e->name(), e->rule.max_per_second,
                                       fleetNote(static_cast<uint32_t>(rate), proxies))};
    }
    e->tokens -= 1;
    charged.push_back(e.get());
  }
  for (auto& e : entries) {
    if (e) e->admitted.fetch_add(1, std::memory_order_relaxed);
  }
  return ticket;
}

std::vector<StatementLimits::Row> StatementLimits::rows() const {
  auto t = table();
  const uint32_t proxies = fleetProxies();
  std::vector<Row> out;
  auto add = [&](const char* kind, const Entry& e) {
    Row r;
    r.kind = kind;
    r.name = e.rule.user.empty() ? e.rule.digest : e.rule.user;
    r.max_per_second = e.rule.max_per_second;
    r.max_concurrent = e.rule.max_concurrent;
    r.share_per_second = e.rule.max_per_second ? static_cast<uint32_t>(rateShare(e.rule.max_per_second, proxies)) : 0;
    r.share_concurrent = e.rule.max_concurrent ? concurrencyShare(e.rule.max_concurrent, proxies) : 0;
    r.in_flight = e.in_flight.load(std::memory_order_relaxed);
    r.admitted = e.admitted.load(std::memory_order_relaxed);
    r.refused_rate = e.refused_rate.load(std::memory_order_relaxed);
    r.refused_concurrency = e.refused_concurrency.load(std::memory_order_relaxed);
    out.push_back(std::move(r));
  };
  for (const auto& [name, e] : t->by_user) add("user", *e);
  for (const auto& [name, e] : t->by_digest) add("digest", *e);
  std::sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return std::tie(a.kind, a.name) > std::tie(b.kind, b.name); });
  return out;
}

}  // namespace sp::proxy
