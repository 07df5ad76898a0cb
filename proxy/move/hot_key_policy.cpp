#include "proxy/move/hot_key_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace sp::proxy {

namespace {

bool pinned(const routing::TableRule& rule, uint64_t key) {
  return std::binary_search(rule.hot_keys.begin(), rule.hot_keys.end(), std::pair<uint64_t, uint32_t>{key, 0},
                            [](const auto& a, const auto& b) { return a.first < b.first; });
}

bool tableMoving(const std::vector<MoveRecord>& running, const std::string& table) {
  return std::any_of(running.begin(), running.end(),
                     [&](const MoveRecord& r) { return r.request.table == table; });
}

// Without its figures: blocked() must stay the same while nothing else changes (it is logged when it does).
std::string describeKey(const HotKeyRow& row) {
  return fmt::format("key {} of {} is hot on shard {}", row.key, row.table, row.shard);
}

}  // namespace

void HotKeyPolicy::configure(const conf::HotKeyAutoMoveConfig& settings) {
  if (!settings.enabled) hot_.clear();
  settings_ = settings;
}

bool HotKeyPolicy::qualifies(const HotKeyRow& row, const routing::CompiledShardMap& map) const {
  const routing::TableRule* rule = map.findTable(row.table);
  // A pinned key has a shard of its own already: its share there says nothing about its neighbours.
  if (!rule || (rule->method == routing::ShardMethod::kBucket && pinned(*rule, row.key))) return false;
  return row.statements_per_s >= settings_.min_statements_per_second &&
         row.share() * 100 >= settings_.min_shard_share_pct;
}

void HotKeyPolicy::track(Clock::time_point now, const HotKeyPolicyInput& input) {
  // Only the keys above both thresholds now stay: a key that dropped below
  // at one check starts its sustain again (the rates are decayed over about
  // 5 s already, so one quiet moment does not reset it).
  std::map<KeyId, Hot> next;
  for (const auto& row : input.keys) {
    if (!qualifies(row, *input.map)) continue;
    KeyId id{row.table, row.key};
    auto it = hot_.find(id);
    if (it != hot_.end() && it->second.shard == row.shard) next.emplace(std::move(id), it->second);
    else next.emplace(std::move(id), Hot{row.shard, now});
  }
  hot_ = std::move(next);
}

bool HotKeyPolicy::waiting(Clock::time_point now, const HotKeyPolicyInput& input) {
  if (in_flight_) {
    const int64_t id = *in_flight_;
    if (std::any_of(input.running.begin(), input.running.end(), [&](const MoveRecord& r) { return r.id == id; })) {
      blocked_ = fmt::format("the policy's move {} still runs (one at a time)", id);
      return true;
    }
    in_flight_.reset();
  }
  if (last_attempt_ && now - *last_attempt_ < std::chrono::seconds(settings_.cooldown_seconds)) {
    blocked_ = fmt::format("the policy's previous move started less than overload.hot_key_auto_move."
                           "cooldown_seconds = {} ago",
                           settings_.cooldown_seconds);
    return true;
  }
  return false;
}

std::optional<std::string> HotKeyPolicy::target(const routing::TableRule& rule, uint64_t key,
                                                const std::map<std::string, double>& shard_rates) const {
  const uint32_t own = rule.shardIndexOf(key);
  const auto& allowed = settings_.target_shards;
  std::optional<std::string> best;
  double best_rate = 0;
  // A bucket table's shards are sorted by name: equal traffic (none counted
  // on either, say) goes to the first name, the same on every check.
  for (const auto& s : rule.shards) {
    if (s.index == own) continue;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s.name) == allowed.end()) continue;
    auto it = shard_rates.find(s.name);
    const double rate = it == shard_rates.end() ? 0 : it->second;
    if (!best || rate < best_rate) {
      best = s.name;
      best_rate = rate;
    }
  }
  return best;
}

std::optional<HotKeyMoveDecision> HotKeyPolicy::check(Clock::time_point now, const HotKeyPolicyInput& input) {
  blocked_.clear();
  if (!settings_.enabled || !input.map) {
    hot_.clear();
    return std::nullopt;
  }
  track(now, input);
  std::vector<const HotKeyRow*> due;
  for (const auto& row : input.keys) {
    auto it = hot_.find(KeyId{row.table, row.key});
    if (it != hot_.end() && now - it->second.since >= std::chrono::seconds(settings_.sustain_seconds)) {
      due.push_back(&row);
    }
  }
  if (due.empty()) return std::nullopt;
  // The busiest first; equal rates by name, the same order on every check.
  std::sort(due.begin(), due.end(), [](const HotKeyRow* a, const HotKeyRow* b) {
    if (a->statements_per_s != b->statements_per_s) return a->statements_per_s > b->statements_per_s;
    return std::tie(a->table, a->key) < std::tie(b->table, b->key);
  });
  if (waiting(now, input)) {
    blocked_ = describeKey(*due.front()) + ", but " + blocked_;
    return std::nullopt;
  }
  std::vector<std::string> reasons;
  for (const HotKeyRow* row : due) {
    const routing::TableRule& rule = *input.map->findTable(row->table);  // qualifies() found it
    if (rule.method != routing::ShardMethod::kBucket) {
      reasons.push_back(describeKey(*row) + ": " + row->table +
                        " is a mod table, whose keys cannot move alone (MOVE SHARD moves a whole physical table)");
      continue;
    }
    if (tableMoving(input.running, row->table)) {
      reasons.push_back(describeKey(*row) + ": a move of " + row->table + " runs");
      continue;
    }
    auto to = target(rule, row->key, input.shard_rates);
    if (!to) {
      reasons.push_back(describeKey(*row) + ": no shard of " + row->table +
                        " other than its own is allowed by overload.hot_key_auto_move.target_shards");
      continue;
    }
    HotKeyMoveDecision d;
    d.request.kind = routing::MoveKind::kKey;
    d.request.table = row->table;
    d.request.key = row->key;
    d.request.target = *to;
    d.source_shard = row->shard;
    d.share = row->share();
    d.statements_per_s = row->statements_per_s;
    d.hot_seconds = std::chrono::duration<double>(now - hot_.at(KeyId{row->table, row->key}).since).count();
    return d;
  }
  for (const auto& r : reasons) blocked_ += (blocked_.empty() ? "" : "; ") + r;
  return std::nullopt;
}

void HotKeyPolicy::started(Clock::time_point now, int64_t move_id) {
  last_attempt_ = now;
  in_flight_ = move_id;
}

void HotKeyPolicy::refused(Clock::time_point now) { last_attempt_ = now; }

}  // namespace sp::proxy
