// Statement limits per user and per statement digest (docs/operations.md,
// "Statement limits"; config statement_limits:, admin SET LIMIT / SHOW
// LIMITS): a rate (statements per second, a token bucket holding one
// second's worth) and a concurrency (statements in flight). A statement over
// either is refused at once with a retryable error, before anything reaches
// a backend: the limits protect the backends from one runaway client or one
// statement shape, so they never queue (the per-backend budget queues).
//
// In a fleet each proxy enforces its share: the limit divided by the proxies
// alive (at least 1 statement, or 1 per second), so the fleet as a whole stays
// within the limit whatever the spread of clients, and below it when the
// clients sit unevenly (docs: the tolerance).
//
// Thread-safe: sessions on every worker admit here; the rules are an
// immutable table swapped whole by SET LIMIT, each rule's counters shared.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "conf/statement_limits_config.hpp"

namespace sp::proxy {

class StatementLimits {
 public:
  using Clock = std::chrono::steady_clock;

  // A rule's digest is normalized as SHOW DIGESTS writes statements, so it
  // may be given with its literals.
  explicit StatementLimits(const std::vector<conf::StatementLimitRule>& rules);
  ~StatementLimits();

  // Whether any rule names a digest: only then do statements need theirs.
  bool hasDigestRules() const { return has_digest_rules_.load(std::memory_order_relaxed); }
  bool empty() const { return empty_.load(std::memory_order_relaxed); }

  struct Entry;
  // Held while the statement runs: its concurrency slots.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&&) noexcept = default;
    Ticket& operator=(Ticket&&) noexcept;
    ~Ticket();
   private:
    friend class StatementLimits;
    std::vector<std::shared_ptr<Entry>> held_;
  };
  struct Refusal {
    bool rate = false;  // else concurrency
    std::string message;
  };
  // Before a statement of `user` whose normalized text is `digest` (empty
  // when no rule names a digest).
  std::variant<Ticket, Refusal> admit(std::string_view user, std::string_view digest, Clock::time_point now);

  // SET LIMIT (or a fleet's record of one): adds or replaces the rule for
  // its user or digest (0 and 0: removes it). The same limits again keep
  // the rule's counters. Refused beyond conf::kMaxStatementLimitRules.
  std::expected<void, std::string> set(const conf::StatementLimitRule& rule);
  // The rule as kept: its digest normalized (the key of a fleet's record).
  static conf::StatementLimitRule normalized(conf::StatementLimitRule rule);
  // The proxies of the fleet alive (1 alone): each enforces its share.
  void setFleetProxies(uint32_t proxies);
  uint32_t fleetProxies() const { return proxies_.load(std::memory_order_relaxed); }

  struct Row {
    std::string kind, name;  // "user" | "digest", the user or digest
    uint32_t max_per_second = 0, max_concurrent = 0;   // fleet-wide, as set
    uint32_t share_per_second = 0, share_concurrent = 0;  // this proxy's
    uint32_t in_flight = 0;
    uint64_t admitted = 0, refused_rate = 0, refused_concurrency = 0;
  };
  std::vector<Row> rows() const;

 private:
  struct Table;
  std::shared_ptr<const Table> table() const;
  void publish(std::shared_ptr<const Table> table);

  std::mutex set_mutex_;      // serialises set()
  mutable std::mutex mutex_;  // table_ swaps; reads copy the pointer under it
  std::shared_ptr<const Table> table_;
  std::atomic<bool> has_digest_rules_{false};
  std::atomic<bool> empty_{true};
  std::atomic<uint32_t> proxies_{1};
};

}  // namespace sp::proxy
