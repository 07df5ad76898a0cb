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

}  // namespace

struct PlanCache::Entry {
  std::string text;  // the normalized text the statement's views point into
  std::optional<parser::Statement> statement;  // empty: the normalized text does not parse
  size_t bytes = 0;  // entryBytes()
};

NormalizedQuery normalizeQuery(std::string_view sql, std::span<const ParamValue> params) {
  NormalizedQuery q;
  auto tokens = parser::tokenize(sql);
  q.text.reserve(sql.size());
  q.spans.reserve(tokens.size());
  uint32_t placeholder = 0;
  for (const auto& token : tokens) {
    if (token.kind == TokenKind::kEnd) break;
    if (token.isError()) q.cacheable = false;
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
  return q;
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
  NormalizedQuery q = normalizeQuery(sql, input.params);
  if (!q.cacheable) return planQuery(sql, input);
  Plan plan = planNormalized(sql, input, q);
  if (normalized) *normalized = std::move(q.text);
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
    auto parsed = parser::parse(fresh->text, input.limits);
    if (parsed) fresh->statement = std::move(*parsed);
    fresh->bytes = entryBytes(fresh->text.size(), fresh->statement ? fresh->statement->node_count : 0);
    entry = fresh;
    insert(q.text, entry);
  }
  // Shapes the parser rejects once `?` stands in for a literal (e.g. CHAR(10)) are planned directly.
  if (!entry->statement) return planQuery(sql, input);
  PlannerInput normalized{input.map,           input.default_backend, q.params,
                          input.split_in_lists, input.allow_scatter,   input.multi_shard_writes,
                          input.limits};
  normalized.names = input.names;
  std::vector<TextEdit> edits;
  Plan plan = detail::planStatementWithEdits(*entry->statement, entry->text, normalized, &edits);
  if (plan.kind == PlanKind::kRefused || plan.kind == PlanKind::kMultiRoute ||
      plan.kind == PlanKind::kScatter || plan.kind == PlanKind::kMultiWrite) {
    // Messages quote the values as written, and each shard of a split plan has
    // its own edits: plan the original text for those.
    return planQuery(sql, input);
  }
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
  plan.depends_on_params = false;
  for (const auto& e : q.params) plan.depends_on_params |= e.kind != ParamValue::Kind::kLiteral;
  return plan;
}

}  // namespace sp::routing
