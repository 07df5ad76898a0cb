// Plan cache keyed by a statement's normalized form: literals replaced by `?`,
// comments and spacing dropped. Repeated shapes skip the parser (the costly
// part); the cached tree of the normalized text is planned again on every use
// with the literals passed as parameters that the planner judges exactly like
// the literals themselves, so a cached entry never depends on a shard map
// snapshot or on literal values. The routed SQL is always the client's own
// text with the planner's edits mapped back onto it: byte for byte the same
// result as planQuery().
//
// A shape that names no sharded or physical table goes to the default
// backend whatever its values: once planned so, later hits under the same
// settings (shard map checksum, default backend, names) skip the planner.
//
// Plans whose per-shard SQL or messages depend on the literals as written
// (scatter plans with their per-shard SQL and merge specification, split
// writes, multi-route plans, refusals) are kept whole, keyed by the exact
// text, the shard map's checksum and the planner's settings: repeating such
// a statement costs one normalization pass and no parse either.
//
// Not thread-safe: use one cache per worker thread (no locks on the hot path).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parser/lexer.hpp"
#include "routing/plan.hpp"

namespace sp::routing {

// The normalized form of a statement and how to get back to the original.
struct NormalizedQuery {
  std::string text;                 // e.g. "SELECT * FROM msg WHERE conv_id = ? AND seq > ?"
  std::vector<ParamValue> params;   // one per `?` of `text`, in order (literal or bound parameter)
  // Per significant token: [begin, end) in `text` and in the original SQL.
  struct TokenSpan {
    uint32_t norm_begin, norm_end, orig_begin, orig_end;
  };
  std::vector<TokenSpan> spans;
  bool cacheable = true;  // false when the text has lexer errors
};

// `params` are the statement's own bound `?` values (prepared statements).
NormalizedQuery normalizeQuery(std::string_view sql, std::span<const ParamValue> params);
// The same from `tokens` (tokenize(sql) under the default dialect).
NormalizedQuery normalizeQuery(std::string_view sql, std::span<const parser::Token> tokens,
                               std::span<const ParamValue> params);
// The same into `out`, reusing its buffers (the plan cache's per-statement scratch).
void normalizeQueryInto(std::string_view sql, std::span<const parser::Token> tokens,
                        std::span<const ParamValue> params, NormalizedQuery& out);

// The statement as written (comments and spacing kept) with every literal
// value replaced by `?`: what logs show instead of the values.
std::string maskLiterals(std::string_view sql);

class PlanCache {
 public:
  // At most `capacity` entries and about `max_bytes` of memory (config
  // limits.max_plan_cache_bytes, shared among the worker threads); the least
  // recently used entries go first. An entry bigger than max_bytes is not kept.
  explicit PlanCache(size_t capacity = 4096, size_t max_bytes = 64u << 20)
      : capacity_(capacity), max_bytes_(max_bytes) {}

  // Statements longer than this bypass the cache (planQuery directly).
  static constexpr size_t kMaxCachedQueryBytes = 16 * 1024;

  // Same result as planQuery(sql, input), through the cache. `normalized`
  // (optional) receives the normalized text (query digests), left empty for
  // statements the cache does not normalize (too long, lexer errors).
  Plan plan(std::string_view sql, const PlannerInput& input, std::string* normalized = nullptr);
  // The same reading the statement's tokens when the caller has them
  // (tokenize(sql) under the default dialect; empty: lexed here).
  Plan plan(std::string_view sql, std::span<const parser::Token> tokens, const PlannerInput& input,
            std::string* normalized = nullptr);

  size_t size() const { return index_.size(); }
  // Memory the entries hold, as estimated by entryBytes().
  size_t bytes() const { return bytes_; }
  void setMaxBytes(size_t max_bytes);
  // Estimate of one entry: the normalized text three times (entry, index key,
  // LRU list), about 400 bytes per parsed node (docs/configuration.md,
  // limits.max_statement_nodes) and a fixed overhead.
  static size_t entryBytes(size_t text_bytes, size_t nodes) { return 3 * text_bytes + 400 * nodes + 512; }
  uint64_t hits() const { return hits_; }
  // Of those, hits on a whole plan kept for its exact text (scatter, split write, refusal).
  uint64_t exactHits() const { return exact_hits_; }
  // Of those, hits on a shape known to touch no sharded table, answered without planning.
  uint64_t passthroughHits() const { return passthrough_hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t evictions() const { return evictions_; }
  void clear();

 private:
  struct Entry;
  Plan planNormalized(std::string_view sql, const PlannerInput& input, const NormalizedQuery& q);
  // A plan kept whole for its exact text (see the top of this file).
  Plan exactPlan(std::string_view sql, const PlannerInput& input, const Entry& entry);
  std::optional<Plan> findExact(std::string_view sql, const PlannerInput& input, const Entry& entry);
  std::shared_ptr<const Entry> lookup(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const Entry> entry);

  void evictOne();

  size_t capacity_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const Entry>, std::list<std::string>::iterator>> index_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
  uint64_t exact_hits_ = 0;
  uint64_t passthrough_hits_ = 0;
  NormalizedQuery scratch_;  // plan()'s normalized form, buffers kept between statements
  static constexpr size_t kMaxExactPlans = 8;  // whole plans kept per shape
};

}  // namespace sp::routing
