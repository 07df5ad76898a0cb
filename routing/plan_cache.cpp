#include "routing/plan_cache.hpp"

#include <algorithm>

#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "routing/planner_detail.hpp"

namespace sp::routing {
namespace {

using parser::LiteralKind;
using parser::TokenKind;

std::optional<LiteralKind> literalKindOf(TokenKind kind) {
  switch (kind) {
    case TokenKind::kInteger: return LiteralKind::kInteger;
    case TokenKind::kDecimal: return LiteralKind::kDecimal;
    case TokenKind::kFloat: return LiteralKind::kFloat;
    case TokenKind::kString: return LiteralKind::kString;
    case TokenKind::kHexString: return LiteralKind::kHex;
    case TokenKind::kBitString: return LiteralKind::kBit;
    default: return std::nullopt;
  }
}

// Maps a position of the normalized text (always a token boundary) back to the original SQL.
std::optional<uint32_t> mapPosition(const NormalizedQuery& q, uint32_t pos, bool is_end) {
  auto it = std::lower_bound(q.spans.begin(), q.spans.end(), pos, [&](const auto& span, uint32_t p) {
    return (is_end ? span.norm_end : span.norm_begin) < p;
  });
  if (it == q.spans.end() || (is_end ? it->norm_end : it->norm_begin) != pos) return std::nullopt;
  return is_end ? it->orig_end : it->orig_begin;
}

bool sameLimits(const parser::ParseLimits& a, const parser::ParseLimits& b) {
  return a.max_nodes == b.max_nodes && a.max_depth == b.max_depth && a.max_in_values == b.max_in_values;
}

// A bound `?` value (not a literal) stood in the statement.
bool dependsOnParams(const NormalizedQuery& q) {
  return std::any_of(q.params.begin(), q.params.end(),
                     [](const ParamValue& p) { return p.kind != ParamValue::Kind::kLiteral; });
}

// What planStatementWithEdits() and the edits give a passthrough shape: the
// client's text, unchanged, for the default backend.
Plan passthroughPlan(std::string_view sql, std::string_view default_backend, const NormalizedQuery& q) {
  Plan plan;
  plan.kind = PlanKind::kPassthrough;
  plan.targets.push_back({std::string(default_backend), "", "", std::string(sql)});
  plan.depends_on_params = dependsOnParams(q);
  return plan;
}

}  // namespace

// What a whole plan was made with, besides its text: the same text with
// these gives the same plan.
struct ExactKey {
  std::string map_checksum;
  std::string default_backend;
  bool split_in_lists = false;
  bool allow_scatter = true;
  MultiShardWrites multi_shard_writes = MultiShardWrites::kRefuse;
  parser::ParseLimits limits;

  static ExactKey of(const PlannerInput& input) {
    return {input.map.checksum(), std::string(input.default_backend), input.split_in_lists, input.allow_scatter,
            input.multi_shard_writes, input.limits};
  }
  bool matches(const PlannerInput& in) const {
    return map_checksum == in.map.checksum() && default_backend == in.default_backend &&
           split_in_lists == in.split_in_lists && allow_scatter == in.allow_scatter &&
           multi_shard_writes == in.multi_shard_writes && sameLimits(limits, in.limits);
  }
};

// A plan kept whole; `table` is found again by name in the map of each use
// (the map it was planned with may be gone, replaced by an equal one).
struct ExactPlan {
  ExactKey key;
  Plan plan;
  std::string table;
  size_t bytes = 0;  // estimated, counted in the entry's bytes
};

// The settings a passthrough shape was planned under: the same shape under
// the same ones is a passthrough again (names are identifiers, never literals).
struct PassthroughKey {
  ExactKey planner;
  std::string sharded_schema;
  std::string current_database;
  bool case_sensitive = false;

  static PassthroughKey of(const PlannerInput& input) {
    return {ExactKey::of(input), std::string(input.names.sharded_schema), std::string(input.names.current_database),
            input.names.case_sensitive};
  }
  bool matches(const PlannerInput& in) const {
    return planner.matches(in) && sharded_schema == in.names.sharded_schema &&
           current_database == in.names.current_database && case_sensitive == in.names.case_sensitive;
  }
};

struct PlanCache::Entry {
  std::string text;  // the normalized text the statement's views point into
  std::optional<parser::Statement> statement;  // empty: the normalized text does not parse
  // The statement's table and column references (pointers into `statement`,
  // which never moves once the entry exists): the same for every statement of
  // the shape, so walked once, not once per statement.
  StatementRefs refs;
  parser::ParseLimits parsed_under;  // the tree was checked against these budgets only
  mutable std::optional<PassthroughKey> passthrough;  // set: planned as a passthrough under these settings
  mutable size_t bytes = 0;  // entryBytes(), and the whole plans kept
  // Whole plans of this shape by exact text (few: the last kMaxExactPlans).
  mutable std::list<std::pair<std::string, ExactPlan>> exact;
};

NormalizedQuery normalizeQuery(std::string_view sql, std::span<const ParamValue> params) {
  const std::vector<parser::Token> tokens = parser::tokenize(sql);
  return normalizeQuery(sql, tokens, params);
}

NormalizedQuery normalizeQuery(std::string_view sql, std::span<const parser::Token> tokens,
                               std::span<const ParamValue> params) {
  NormalizedQuery q;
  normalizeQueryInto(sql, tokens, params, q);
  return q;
}

void normalizeQueryInto(std::string_view sql, std::span<const parser::Token> tokens,
                        std::span<const ParamValue> params, NormalizedQuery& q) {
  q.text.clear();
  q.params.clear();
  q.spans.clear();
  q.cacheable = true;
  q.text.reserve(sql.size());
  q.spans.reserve(tokens.size());
  uint32_t placeholder = 0;
  // LIMIT/OFFSET take integers only: the parser refuses `LIMIT 2.00`, but it
  // would accept the normalized `LIMIT ?`, so such a text is planned directly.
  enum class LimitOperand : uint8_t { kNo, kExpected, kAfter } limit = LimitOperand::kNo;
  for (const auto& token : tokens) {
    if (token.kind == TokenKind::kEnd) break;
    if (token.isError()) q.cacheable = false;
    if (token.isKeyword(parser::Keyword::kLIMIT) || token.isKeyword(parser::Keyword::kOFFSET)) {
      limit = LimitOperand::kExpected;
    } else if (limit == LimitOperand::kExpected) {
      if (literalKindOf(token.kind) && token.kind != TokenKind::kInteger) q.cacheable = false;
      limit = LimitOperand::kAfter;
    } else if (limit == LimitOperand::kAfter) {
      limit = token.kind == TokenKind::kComma ? LimitOperand::kExpected : LimitOperand::kNo;
    }
    if (!q.text.empty()) q.text += ' ';
    auto begin = static_cast<uint32_t>(q.text.size());
    if (auto kind = literalKindOf(token.kind)) {
      q.text += '?';
      ParamValue p;
      p.kind = ParamValue::Kind::kLiteral;
      p.literal_kind = *kind;
      p.literal_text = token.text(sql);
      q.params.push_back(p);
    } else {
      q.text += token.text(sql);
      if (token.kind == TokenKind::kPlaceholder) {
        q.params.push_back(placeholder < params.size() ? params[placeholder] : ParamValue{});
        if (placeholder >= params.size()) q.cacheable = false;  // planQuery would see "no value"
        ++placeholder;
      }
    }
    q.spans.push_back({begin, static_cast<uint32_t>(q.text.size()), token.begin, token.end});
  }
}

std::string maskLiterals(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  size_t copied = 0;
  for (const auto& token : parser::tokenize(sql)) {
    if (token.kind == TokenKind::kEnd) break;
    if (!literalKindOf(token.kind)) continue;
    out.append(sql.substr(copied, token.begin - copied));
    out += '?';
    copied = token.end;
  }
  out.append(sql.substr(std::min(copied, sql.size())));
  return out;
}

void PlanCache::clear() {
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

void PlanCache::evictOne() {
  auto it = index_.find(lru_.back());
  bytes_ -= it->second.first->bytes;
  index_.erase(it);
  lru_.pop_back();
  ++evictions_;
}

void PlanCache::setMaxBytes(size_t max_bytes) {
  max_bytes_ = max_bytes;
  while (!lru_.empty() && bytes_ > max_bytes_) evictOne();
}

std::shared_ptr<const PlanCache::Entry> PlanCache::lookup(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.second);
  return it->second.first;
}

void PlanCache::insert(const std::string& key, std::shared_ptr<const Entry> entry) {
  if (capacity_ == 0 || entry->bytes > max_bytes_) return;
  while (!lru_.empty() && (index_.size() >= capacity_ || bytes_ + entry->bytes > max_bytes_)) evictOne();
  bytes_ += entry->bytes;
  lru_.push_front(key);
  index_.emplace(key, std::pair{std::move(entry), lru_.begin()});
}

Plan PlanCache::plan(std::string_view sql, const PlannerInput& input, std::string* normalized) {
  return plan(sql, {}, input, normalized);
}

Plan PlanCache::plan(std::string_view sql, std::span<const parser::Token> tokens, const PlannerInput& input,
                     std::string* normalized) {
  // Long texts are planned directly: they rarely repeat, and an entry holds
  // the text twice plus its tree, so caching them would let a client fill
  // memory with a few thousand big statements.
  if (sql.size() > kMaxCachedQueryBytes) return planQuery(sql, input);
  // The cache is keyed by text normalized under the default dialect; a
  // session under another sql_mode or charset plans afresh (rare, exact).
  if (!(input.dialect == parser::Dialect{})) return planQuery(sql, input);
  // Entries assume unqualified names are in the sharded schema; a session
  // using another database (rare) plans afresh. The case rule is the
  // backends' and the same for every session of the process.
  if (!input.names.sharded_schema.empty() &&
      !sameName(input.names.current_database, input.names.sharded_schema, input.names)) {
    return planQuery(sql, input);
  }
  // scratch_ keeps its buffers from statement to statement: no allocation
  // per statement once the longest shape has been seen.
  NormalizedQuery& q = scratch_;
  if (tokens.empty()) {
    const std::vector<parser::Token> own = parser::tokenize(sql);
    normalizeQueryInto(sql, own, input.params, q);
  } else {
    normalizeQueryInto(sql, tokens, input.params, q);
  }
  if (!q.cacheable) return planQuery(sql, input);
  Plan plan = planNormalized(sql, input, q);
  if (normalized) normalized->swap(q.text);  // the caller's old buffer becomes the next scratch
  return plan;
}

Plan PlanCache::planNormalized(std::string_view sql, const PlannerInput& input, const NormalizedQuery& q) {
  std::shared_ptr<const Entry> entry = lookup(q.text);
  if (entry) {
    ++hits_;
  } else {
    ++misses_;
    auto fresh = std::make_shared<Entry>();
    fresh->text = q.text;
    fresh->parsed_under = input.limits;
    auto parsed = parser::parse(fresh->text, input.limits);
    if (parsed) {
      fresh->statement = std::move(*parsed);
      fresh->refs = collectRefs(*fresh->statement);
    }
    fresh->bytes = entryBytes(fresh->text.size(), fresh->statement ? fresh->statement->node_count : 0);
    entry = fresh;
    insert(q.text, entry);
  }
  // Shapes the parser rejects once `?` stands in for a literal (e.g. CHAR(10)) are planned directly.
  if (!entry->statement) return planQuery(sql, input);
  // A tree parsed under other budgets may be over these (config limits are
  // fixed per process, so only tests get here).
  if (!sameLimits(entry->parsed_under, input.limits)) return planQuery(sql, input);
  if (entry->passthrough && entry->passthrough->matches(input)) {
    ++passthrough_hits_;
    return passthroughPlan(sql, input.default_backend, q);
  }
  const bool literals_only = std::all_of(q.params.begin(), q.params.end(),
                                         [](const ParamValue& p) { return p.kind == ParamValue::Kind::kLiteral; });
  if (literals_only && !entry->exact.empty()) {
    if (auto kept = findExact(sql, input, *entry)) return std::move(*kept);
  }
  PlannerInput normalized{input.map,           input.default_backend, q.params,
                          input.split_in_lists, input.allow_scatter,   input.multi_shard_writes,
                          input.limits};
  normalized.names = input.names;
  std::vector<TextEdit> edits;
  Plan plan = detail::planStatementWithEdits(*entry->statement, entry->text, normalized, &edits, &entry->refs);
  if (plan.kind == PlanKind::kRefused || plan.kind == PlanKind::kMultiRoute ||
      plan.kind == PlanKind::kScatter || plan.kind == PlanKind::kMultiWrite || plan.copies_text) {
    // Messages quote the values as written, and each shard of a split plan has
    // its own edits: plan the original text for those, and keep the plan.
    if (!literals_only) return planQuery(sql, input);
    return exactPlan(sql, input, *entry);
  }
  if (plan.kind == PlanKind::kPassthrough && edits.empty()) entry->passthrough = PassthroughKey::of(input);
  for (auto& e : edits) {
    // Tokens are separated by one space in the normalized text, so a position
    // is either a token's begin or a token's end, never both.
    auto begin = mapPosition(q, e.begin, false);
    if (!begin && e.begin == e.end) begin = mapPosition(q, e.begin, true);
    auto end = e.begin == e.end ? begin : mapPosition(q, e.end, true);
    if (!begin || !end) return planQuery(sql, input);  // not on a token boundary: never guess
    e.begin = *begin;
    e.end = *end;
  }
  for (auto& target : plan.targets) target.sql = applyEdits(sql, edits);
  plan.depends_on_params = dependsOnParams(q);
  return plan;
}

std::optional<Plan> PlanCache::findExact(std::string_view sql, const PlannerInput& input, const Entry& entry) {
  for (auto it = entry.exact.begin(); it != entry.exact.end(); ++it) {
    if (it->first != sql || !it->second.key.matches(input)) continue;
    entry.exact.splice(entry.exact.begin(), entry.exact, it);  // most recent first
    ++exact_hits_;
    Plan plan = it->second.plan;
    if (!it->second.table.empty()) plan.table = input.map.findTable(it->second.table);
    return plan;
  }
  return std::nullopt;
}

Plan PlanCache::exactPlan(std::string_view sql, const PlannerInput& input, const Entry& entry) {
  Plan plan = planQuery(sql, input);
  auto cached = index_.find(entry.text);
  if (cached == index_.end() || cached->second.first.get() != &entry) return plan;  // the shape is not kept
  size_t bytes = 2 * sql.size() + 512;
  for (const auto& t : plan.targets) bytes += 2 * (t.sql.size() + t.backend.size() + t.physical_table.size()) + 128;
  if (plan.refusal) bytes += plan.refusal->message.size();
  if (bytes > max_bytes_ / 8) return plan;  // too big to keep
  ExactPlan kept{ExactKey::of(input), plan, plan.table ? plan.table->name : std::string(), bytes};
  kept.plan.table = nullptr;
  entry.exact.emplace_front(std::string(sql), std::move(kept));
  entry.bytes += bytes;
  bytes_ += bytes;
  if (entry.exact.size() > kMaxExactPlans) {
    const size_t oldest = entry.exact.back().second.bytes;
    entry.exact.pop_back();
    entry.bytes -= oldest;
    bytes_ -= oldest;
  }
  while (lru_.size() > 1 && bytes_ > max_bytes_) evictOne();
  return plan;
}

}  // namespace sp::routing
